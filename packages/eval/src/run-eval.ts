import { ValidationError } from '@hopline/contracts';
import type { ReasoningSwitch } from '@hopline/reasoning';
import { REASONING_SWITCH_NAMES } from '@hopline/reasoning';
import type { EmbeddedLexicalBackendOptions, Embedder, FusionMethod, HybridRetrieverOptions } from '@hopline/retrieval';
import { hashText, hasHan } from '@hopline/text';
import type { SwitchDelta } from './ablation.js';
import { switchDelta } from './ablation.js';
import type { EvalDocument, EvalQuestion, EvalSet } from './data/eval-set.js';
import { ingestCorpus } from './knowledge-base.js';
import { isJudgement, normalizeAnswer } from './metrics/answers.js';
import type { GroupSummary } from './metrics/summary.js';
import { summarizeOutcomes } from './metrics/summary.js';
import type { EvalMode } from './modes/mode.js';
import type { QuestionOutcome, SystemRuns } from './outcome.js';
import type { EvalRetrievalStack } from './retrieval-stack.js';
import { openEvalRetrievalStack } from './retrieval-stack.js';

export interface EvalReport {
  mode: string;
  k: number;
  questions: number;
  /** The corpus, whole whatever questions were selected. */
  kb: { documents: number; chunks: number; ingestMs: number };
  embedder: string;
  /** How the two retrieval paths were fused, and their weights. */
  fusion: FusionMethod;
  weights: { bm25: number; vector: number };
  /** Every question not set apart. */
  overall: GroupSummary;
  /** Per data set, and per data set set apart. */
  byGroup: Record<string, GroupSummary>;
  /** Questions reported apart, outside `overall`. */
  setApart: number;
  /** Questions asked again over a copy of the corpus without one gold document. */
  unanswerable: number;
  /** With `ablate`: per rule or mechanism, what switching it off alone changed. */
  ablation?: Record<string, SwitchDelta>;
}

export interface RunEvalOptions {
  mode: EvalMode;
  k: number;
  questionTimeoutMs?: number;
  embedder?: Embedder;
  hybrid?: Partial<HybridRetrieverOptions>;
  lexical?: Pick<EmbeddedLexicalBackendOptions, 'bm25' | 'titleWeight' | 'tokenizer'>;
  /** Reasoning switches off in every run (the ablation switches one more off in turn). */
  switchedOff?: readonly ReasoningSwitch[];
  /** How many of the questions to ask again with one of their gold documents removed. */
  unanswerable?: number;
  /** Also run multi-hop once per reasoning switch, with that switch off. */
  ablate?: boolean;
  /** Called with each question's outcome as soon as it has one. */
  onOutcome?: (outcome: QuestionOutcome) => void | Promise<void>;
}

/**
 * The questions made unanswerable: the first n answerable ones, not set apart, in the order of
 * the SHA-256 of "unanswerable:" + id (independent of the tune/check split), each losing the
 * gold document that holds its answer. In hop order (MuSiQue) that is the last hop's; otherwise
 * the gold documents come in no order that says which states the answer (HotpotQA lists them as
 * first mentioned), so it is the last one whose text states the gold answer or an alias, and the
 * last one where none does (a yes/no judgement, which no text states as such). Removing a
 * bridge's document instead would leave the answer's own document in the copy, still answering.
 */
export function chooseUnanswerable(
  questions: readonly EvalQuestion[],
  n: number,
  documents: ReadonlyMap<string, EvalDocument>,
): Array<{ question: EvalQuestion; removedDocId: string }> {
  return questions
    .filter((question) => question.answerable && question.apart === '' && question.goldDocIds.length > 0)
    .map((question) => ({ question, key: hashText(`unanswerable:${question.id}`) }))
    .sort((a, b) => a.key.localeCompare(b.key))
    .slice(0, n)
    .map(({ question }) => ({ question, removedDocId: answersDocument(question, documents) }));
}

function answersDocument(question: EvalQuestion, documents: ReadonlyMap<string, EvalDocument>): string {
  const last = question.goldDocIds.at(-1) as string;
  if (question.hopOrdered) return last;
  const stating = question.goldDocIds.filter((docId) => {
    const document = documents.get(docId);
    return document !== undefined && question.answers.some((answer) => statesAnswer(document, answer));
  });
  return stating.at(-1) ?? last;
}

/**
 * Whether a document's title or text holds the answer: normalised as answers are scored, as
 * whole words, or for a Chinese answer as a run of characters (punctuation and spaces aside). A
 * yes/no judgement is stated by no text.
 */
function statesAnswer(document: EvalDocument, answer: string): boolean {
  if (isJudgement(answer)) return false;
  const texts = [document.title, document.text];
  if (hasHan(answer)) {
    const wanted = withoutPunctuation(answer);
    return wanted !== '' && texts.some((text) => withoutPunctuation(text).includes(wanted));
  }
  const wanted = normalizeAnswer(answer);
  return wanted !== '' && texts.some((text) => ` ${normalizeAnswer(text)} `.includes(` ${wanted} `));
}

const withoutPunctuation = (text: string) => text.replace(/[\s\p{P}\p{S}]+/gu, '');

type StackOptions = Pick<RunEvalOptions, 'embedder' | 'hybrid' | 'lexical'>;

async function withCorpus<T>(
  documents: readonly EvalDocument[],
  options: StackOptions,
  work: (stack: EvalRetrievalStack, ingest: { documents: number; chunks: number; ms: number }) => Promise<T>,
): Promise<T> {
  const stack = await openEvalRetrievalStack(options);
  try {
    return await work(stack, await ingestCorpus(documents, stack.indexer));
  } finally {
    await stack.close();
  }
}

const answeringRuns = (runs: SystemRuns): SystemRuns =>
  Object.fromEntries(Object.entries(runs).filter(([, run]) => run?.answered !== undefined));

/** What a run asks under: the switches asked off, then (ablation) each other switch off as well. */
type Variant = readonly ReasoningSwitch[];

/**
 * Ingests the whole corpus into fresh embedded indexes and asks the selected questions (so a
 * run over a subset scores each question exactly as the full run does); with `unanswerable`,
 * asks that many of them again over a copy of the corpus without one of their gold documents;
 * with `ablate`, asks them all again once per reasoning switch, that switch off.
 */
export async function runEval(
  set: EvalSet,
  questions: readonly EvalQuestion[],
  options: RunEvalOptions,
): Promise<EvalReport> {
  const removals = chooseUnanswerable(
    questions,
    options.unanswerable ?? 0,
    new Map(set.documents.map((document) => [document.docId, document])),
  );
  if (removals.length > 0 && !options.mode.answers)
    throw new ValidationError(`--unanswerable needs a mode that answers; ${options.mode.name} only retrieves`);
  if (options.ablate && !options.mode.answers)
    throw new ValidationError(`--ablate needs a mode that answers; ${options.mode.name} only retrieves`);
  const base: Variant = options.switchedOff ?? [];
  const variants: Variant[] = [
    base,
    ...(options.ablate
      ? REASONING_SWITCH_NAMES.filter((name) => !base.includes(name)).map((name) => [...base, name])
      : []),
  ];
  const context = { k: options.k, questionTimeoutMs: options.questionTimeoutMs ?? 10_000 };
  const stackOptions: StackOptions = {
    ...(options.embedder ? { embedder: options.embedder } : {}),
    ...(options.hybrid ? { hybrid: options.hybrid } : {}),
    ...(options.lexical ? { lexical: options.lexical } : {}),
  };

  // Per variant, the answers over the copy without the removed documents, by question id.
  const withoutGold = variants.map(() => new Map<string, { removedDocId: string; runs: SystemRuns }>());
  if (removals.length > 0) {
    const removed = new Set(removals.map((removal) => removal.removedDocId));
    await withCorpus(
      set.documents.filter((document) => !removed.has(document.docId)),
      stackOptions,
      async (stack) => {
        for (const [index, switchedOff] of variants.entries()) {
          const ask = options.mode.open({ ...context, stack, switchedOff });
          for (const { question, removedDocId } of removals)
            withoutGold[index]?.set(question.id, { removedDocId, runs: answeringRuns(await ask(question)) });
        }
      },
    );
  }

  return withCorpus(set.documents, stackOptions, async (stack, ingest) => {
    const summaries = [];
    for (const [index, switchedOff] of variants.entries()) {
      const ask = options.mode.open({ ...context, stack, switchedOff });
      const outcomes: QuestionOutcome[] = [];
      for (const question of questions) {
        const copy = withoutGold[index]?.get(question.id);
        const outcome: QuestionOutcome = {
          question,
          runs: await ask(question),
          ...(copy ? { withoutGold: copy } : {}),
        };
        if (index === 0) await options.onOutcome?.(outcome);
        outcomes.push(outcome);
      }
      summaries.push(summarizeOutcomes(outcomes, options.k));
    }
    const [asked, ...ablated] = summaries;
    const { overall, byGroup } = asked as (typeof summaries)[number];
    return {
      mode: options.mode.name,
      k: options.k,
      questions: questions.length,
      kb: { documents: ingest.documents, chunks: ingest.chunks, ingestMs: Math.round(ingest.ms) },
      embedder: stack.embedder.model,
      fusion: stack.hybridOptions.fusion,
      weights: { bm25: stack.hybridOptions.bm25Weight, vector: stack.hybridOptions.vectorWeight },
      overall,
      byGroup,
      setApart: questions.filter((question) => question.apart !== '').length,
      unanswerable: removals.length,
      ...(options.ablate
        ? {
            ablation: Object.fromEntries(
              ablated.map((summary, index) => {
                const name = (variants[index + 1] as Variant).at(-1) as ReasoningSwitch;
                return [name, switchDelta(name, { overall, byGroup }, summary)];
              }),
            ),
          }
        : {}),
    };
  });
}
