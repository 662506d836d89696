import type { Analysis__Output } from '@hopline/contracts';
import { DecidedBy, Route, toHoplineError } from '@hopline/contracts';
import { UsageMeter, type ChatModel } from '@hopline/models';
import type { Logger } from '@hopline/telemetry';
import { instrument } from '@hopline/telemetry';
import { planWithModel, writeHypotheticalAnswer } from './model-plan.js';
import type { RuleAnalysis } from './rules/rule-analysis.js';
import { analyzeByRules } from './rules/rule-analysis.js';
import type { ReasoningSwitch } from '../switches.js';

export interface AnalyzerDependencies {
  /** A chat model for what rules cannot decide; without one the rules decide alone. */
  chat?: ChatModel;
  logger?: Pick<Logger, 'debug' | 'warn'>;
  /** Rules switched off, to measure them (see switches.ts). */
  switchedOff?: readonly ReasoningSwitch[];
}

export interface AnalyzeOptions {
  /** The question's absolute deadline (ms since the Unix epoch). */
  deadlineUnixMs: number;
  signal?: AbortSignal;
}

export interface Analyzer {
  analyze(question: string, options: AnalyzeOptions): Promise<Analysis__Output>;
}

function fromRules(
  rules: RuleAnalysis,
  decidedBy: typeof DecidedBy.RULES | typeof DecidedBy.FALLBACK,
  fallbackReason = '',
): Analysis__Output {
  return {
    route: rules.route,
    subQuestions: rules.subQuestions,
    complexity: rules.complexity,
    signals: rules.signals,
    hydeText: '',
    decidedBy,
    fallbackReason,
    llmCalls: 0,
    tokens: 0,
    controls: null,
  };
}

/**
 * Query understanding: the rules decide first (microseconds); a chat model, when configured,
 * plans only the questions the rules leave open, and writes a hypothetical answer for fuzzy
 * ones. Any model failure leaves the rules' answer standing, marked FALLBACK with the reason.
 */
export function createAnalyzer(deps: AnalyzerDependencies = {}): Analyzer {
  async function analyze(question: string, options: AnalyzeOptions): Promise<Analysis__Output> {
    const rules = analyzeByRules(question, deps.switchedOff);
    const chat = deps.chat;
    if (!chat || (rules.decided && !rules.fuzzy)) return fromRules(rules, DecidedBy.RULES);

    // Every model request of the analysis is counted, so the question's budget includes it.
    const meter = new UsageMeter();
    const call = { ...options, meter };
    const spent = (analysis: Analysis__Output): Analysis__Output => ({
      ...analysis,
      llmCalls: meter.llmCalls,
      tokens: meter.tokens,
    });
    let analysis = fromRules(rules, DecidedBy.RULES);
    if (!rules.decided) {
      try {
        const plan = await instrument('plan question', { attributes: { 'hopline.rules_route': rules.route } }, () =>
          planWithModel(chat, question, rules, call),
        );
        analysis = {
          route: Route[plan.route],
          subQuestions: plan.subQuestions,
          // Multi-focus signals raise the complexity; the model never lowers what the rules saw.
          complexity: Math.max(plan.complexity, rules.complexity),
          signals: rules.signals,
          hydeText: '',
          decidedBy: DecidedBy.MODEL,
          fallbackReason: '',
          llmCalls: 0,
          tokens: 0,
          controls: null,
        };
      } catch (error) {
        if (options.signal?.aborted) throw toHoplineError(error);
        const failure = toHoplineError(error);
        deps.logger?.warn('planning by the model failed; the rules decide', {
          code: failure.code,
          error: failure.message,
        });
        analysis = fromRules(rules, DecidedBy.FALLBACK, `${failure.code}: ${failure.message}`);
      }
    }
    if (rules.fuzzy) {
      try {
        analysis = { ...analysis, hydeText: await writeHypotheticalAnswer(chat, question, call) };
      } catch (error) {
        if (options.signal?.aborted) throw toHoplineError(error);
        const failure = toHoplineError(error);
        deps.logger?.debug('no hypothetical answer: the model failed', { code: failure.code });
        const reason = `hypothetical answer failed (${failure.code})`;
        analysis = {
          ...analysis,
          fallbackReason: analysis.fallbackReason ? `${analysis.fallbackReason}; ${reason}` : reason,
        };
      }
    }
    return spent(analysis);
  }

  return { analyze };
}
