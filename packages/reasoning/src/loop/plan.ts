import type { StopReason__Output, SubQuestion__Output } from '@hopline/contracts';
import { StopReason } from '@hopline/contracts';
import type { PreviousHop } from '../reasoner/reasoner.js';
import { withDeadline } from '@hopline/resilience';
import type { ChainResult } from './chain.js';
import { runChain } from './chain.js';
import type { QuestionRun } from './question-run.js';

export interface PlannedStep {
  sub: SubQuestion__Output;
  /** The sub-question with its dependencies' answers filled in. */
  text: string;
  chain: ChainResult | undefined;
  /** Why the step has no answer, when it has none. */
  failure: string;
  /** The hops of this step's dependencies and its own, in order. */
  path: PreviousHop[];
}

export interface PlanResult {
  steps: PlannedStep[];
  stopReason: StopReason__Output;
  /** Every final step answered: a comparison with one side unknown has nothing to compare. */
  complete: boolean;
  missing: string;
}

/** Sub-questions in topological layers; a cycle or a dangling id puts the rest in one last layer. */
export function planLayers(subQuestions: readonly SubQuestion__Output[]): SubQuestion__Output[][] {
  const ids = new Set(subQuestions.map((sub) => sub.id));
  const done = new Set<string>();
  const layers: SubQuestion__Output[][] = [];
  let remaining = [...subQuestions];
  while (remaining.length > 0) {
    const ready = remaining.filter((sub) => sub.dependsOn.every((id) => done.has(id) || !ids.has(id)));
    const layer = ready.length > 0 ? ready : remaining;
    layers.push(layer);
    for (const sub of layer) done.add(sub.id);
    remaining = remaining.filter((sub) => !layer.includes(sub));
  }
  return layers;
}

/** What a finished step contributes to a dependent sub-question: its bridge entities. */
function answerText(step: PlannedStep | undefined): string | undefined {
  const last = step?.chain?.hops.at(-1)?.finding;
  if (!last || last.unknown || !last.answer) return undefined;
  return (last.bridgeEntities.length > 0 ? last.bridgeEntities.slice(0, 3) : [last.answer]).join(' ');
}

/**
 * The PARALLEL route: each layer's sub-questions at once, each a one-hop chain under the
 * layer's own deadline and signal; a dependent sub-question runs with its dependencies' answers
 * filled in for "#id" and continues their chain. A step that fails or runs out of time
 * degrades the answer; the others go on.
 */
export async function runPlan(
  run: QuestionRun,
  subQuestions: readonly SubQuestion__Output[],
  hydeText: string,
): Promise<PlanResult> {
  const steps = new Map<string, PlannedStep>();
  const layers = planLayers(subQuestions);

  for (const layer of layers) {
    if (run.stopBeforeHop()) break;
    const left = Math.max(0, run.request.deadlineUnixMs - run.now);
    const layerDeadline = run.now + Math.floor(left * run.settings.layerDeadlineShare);
    await withDeadline(layerDeadline, run.signal, (layerSignal) =>
      Promise.all(
        layer.map(async (sub) => {
          const dependencies = sub.dependsOn
            .map((id) => steps.get(id))
            .filter((step): step is PlannedStep => step !== undefined);
          const missing = sub.dependsOn.filter((id) => answerText(steps.get(id)) === undefined && steps.has(id));
          // "#q1" is the dependency's answer and runners-up (a search for them), "#q1.answer" its answer alone.
          const text = sub.text.replace(/#(q?\d+)(\.answer)?\b/g, (match, id: string, only: string | undefined) => {
            const step = steps.get(id) ?? steps.get(`q${id}`);
            return (only ? step?.chain?.hops.at(-1)?.finding.answer || undefined : answerText(step)) ?? match;
          });
          const path = dependencies.flatMap((step) => step.path);
          const step: PlannedStep = { sub, text, chain: undefined, failure: '', path };
          steps.set(sub.id, step);
          if (missing.length > 0) {
            step.failure = `it needs ${missing.join(', ')}, which found nothing`;
            return;
          }
          try {
            // Each sub-question under a scope of its own: the calls below hang their abort
            // listeners on it, so the layer's signal carries one per sub-question, however wide.
            step.chain = await withDeadline(layerDeadline, layerSignal, (signal) =>
              runChain(run, {
                focus: text,
                firstQuery: text,
                expectedHops: path.length + 1,
                previous: path,
                maxHops: 1,
                hydeText: dependencies.length === 0 ? hydeText : '',
                bridgeEntity: dependencies.map((dependency) => answerText(dependency) ?? '').join(' '),
                deadlineUnixMs: layerDeadline,
                signal,
              }),
            );
            const hop = step.chain.hops.at(-1);
            if (hop && !hop.finding.unknown)
              step.path = [...path, { query: hop.query, finding: hop.finding, cited: hop.cited }];
            else step.failure = `${step.chain.stopReason.toLowerCase()}: ${step.chain.missing || text}`;
          } catch (error) {
            step.failure = error instanceof Error ? error.message : String(error);
          }
          if (step.failure) run.degrade(`sub-question ${sub.id} ("${text}") has no answer: ${step.failure}`);
        }),
      ),
    );
  }

  const ordered = subQuestions
    .map((sub) => steps.get(sub.id))
    .filter((step): step is PlannedStep => step !== undefined);
  const dependedOn = new Set(subQuestions.flatMap((sub) => sub.dependsOn));
  const finals = ordered.filter((step) => !dependedOn.has(step.sub.id));
  const answered = finals.filter((step) => step.failure === '' && step.chain !== undefined);
  const interrupted = run.stopBeforeHop();
  const budget = ordered.some((step) => step.chain?.stopReason === StopReason.BUDGET);
  const stopReason =
    interrupted === StopReason.CANCELLED || interrupted === StopReason.DEADLINE
      ? interrupted
      : budget
        ? StopReason.BUDGET
        : StopReason.NOT_ITERATIVE;
  const unanswered = subQuestions.filter((sub) => !steps.has(sub.id) || steps.get(sub.id)?.failure);
  return {
    steps: ordered,
    stopReason,
    complete: finals.length > 0 && answered.length === finals.length,
    missing: unanswered.map((sub) => steps.get(sub.id)?.text ?? sub.text).join('; '),
  };
}
