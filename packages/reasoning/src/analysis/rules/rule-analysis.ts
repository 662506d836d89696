import type { Route__Output, SubQuestion__Output } from '@hopline/contracts';
import { Route } from '@hopline/contracts';
import { contentTerms } from '@hopline/text';
import { compoundParts } from '../../offline/compound.js';
import { roleNounIn } from '../../offline/relations.js';
import { escapeRegExp } from '../../offline/text.js';
import type { QuestionSignals } from './signals.js';
import { detectSignals } from './signals.js';
import type { ReasoningSwitch } from '../../switches.js';
import { isOn } from '../../switches.js';

export interface RuleAnalysis {
  route: Route__Output;
  subQuestions: SubQuestion__Output[];
  /** 1..5; for ITERATIVE, the hops the links of the question suggest. */
  complexity: number;
  signals: string[];
  /** False when the wording leaves the route open: a model, when there is one, should plan. */
  decided: boolean;
  /** No entity to anchor a keyword search: a hypothetical answer would help the vector path. */
  fuzzy: boolean;
}

const MAX_COMPLEXITY = 5;
// Questions this long with no signal at all are where rules most often miss a bridge.
const LONG_QUESTION_TERMS = 12;

const MAX_BRIDGE_HOPS = 4;

/** Hops a bridge question needs: one more than the links it chains through, two at least. */
function bridgeHops(signals: QuestionSignals): number {
  return Math.min(MAX_BRIDGE_HOPS, Math.max(2, 1 + signals.links));
}

/** The question with one focus kept where the list of foci stood: "Which came out first, A?" */
function focusQuestion(question: string, focus: string, foci: readonly string[]): string {
  const others = foci.filter((other) => other !== focus);
  let text = question;
  for (const other of others) {
    const name = `(?:the\\s+)?${escapeRegExp(other)}`;
    const separator = '(?:,|\\bor\\b|\\band\\b|&|和|与|跟|及|、)';
    // The other focus leaves with the conjunction between the two: "A or B" keeps "A" either way.
    const otherFirst =
      text.toLowerCase().indexOf(other.toLowerCase()) < text.toLowerCase().indexOf(focus.toLowerCase());
    const pattern = otherFirst
      ? new RegExp(`${name}\\s*${separator}\\s*`, 'i')
      : new RegExp(`\\s*${separator}\\s*${name}`, 'i');
    text = text.replace(pattern, '');
  }
  if (text === question || contentTerms(text).length === 0) {
    const relation = contentTerms(question).filter(
      (term) => !others.some((other) => contentTerms(other).includes(term)),
    );
    return `${focus}: ${relation.join(' ')}`;
  }
  return text
    .replace(/\s+([,?？])/g, '$1')
    .replace(/,\s*\?/, '?')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

// "by the same director", "a different composer": the role-holders themselves are compared.
const SAME_OR_DIFFERENT = /\b(?:same|different)\s+([\w-]+)/gi;

const comparesRoleHolders = (question: string): boolean => roleNounIn(SAME_OR_DIFFERENT, question) !== undefined;

/**
 * One sub-question per focus; when the foci's documents only name a role ("which film has the
 * director born later, A or B?"), two layers: find each focus's role-holder, then ask about them.
 * Whether they share the role-holder ("by the same director?") asks nothing of the holders: one
 * layer finds them, and the answer compares them.
 */
function parallelPlan(question: string, signals: QuestionSignals): SubQuestion__Output[] {
  const foci = signals.foci;
  if (!signals.roleNoun || comparesRoleHolders(question)) {
    return foci.map((focus, index) => ({
      id: `q${index + 1}`,
      // An event is looked up by its own words: what is asked of it (its date) is the same for all;
      // a distributive question's item carries its own setting and predicate already.
      text: signals.fociAsked ? focus : focusQuestion(question, focus, foci),
      dependsOn: [],
    }));
  }
  const role = signals.roleNoun;
  const rest = contentTerms(question).filter(
    (term) => term !== role && !foci.some((focus) => contentTerms(focus).includes(term)),
  );
  // The finder keeps the question's wording around its focus: "the documentaries Salt and Ember"
  // finds the film, where "director of Salt and Ember" would find any director.
  const finders = foci.map((focus, index) => ({
    id: `q${index + 1}`,
    text: focusQuestion(question, focus, foci),
    dependsOn: [],
  }));
  const askers = foci.map((_focus, index) => ({
    id: `q${foci.length + index + 1}`,
    text: `#q${index + 1} ${rest.join(' ')}`.trim(),
    dependsOn: [`q${index + 1}`],
  }));
  return [...finders, ...askers];
}

export function analyzeByRules(question: string, switchedOff: readonly ReasoningSwitch[] = []): RuleAnalysis {
  const signals = detectSignals(question, switchedOff);
  const fuzzy = signals.anchors.length === 0 && !/\d/.test(question);

  // Two questions in one, the second about the first's answer: asked in turn, both answered.
  const compound = isOn(switchedOff, 'compoundQuestions') ? compoundParts(question, '#q1.answer') : undefined;
  if (compound) {
    return {
      route: Route.PARALLEL,
      subQuestions: [
        { id: 'q1', text: compound.first, dependsOn: [] },
        { id: 'q2', text: compound.second, dependsOn: ['q1'] },
      ],
      complexity: 2,
      signals: [...signals.fired, 'compound'],
      decided: true,
      fuzzy,
    };
  }

  if (signals.multiFocus && signals.foci.length >= 2 && isOn(switchedOff, 'parallelPlans')) {
    const subQuestions = parallelPlan(question, signals);
    const layers = subQuestions.some((sub) => sub.dependsOn.length > 0) ? 2 : 1;
    return {
      route: Route.PARALLEL,
      subQuestions,
      complexity: Math.min(MAX_COMPLEXITY, signals.foci.length + layers - 1 + (signals.bridge ? 1 : 0)),
      signals: signals.fired,
      decided: true,
      fuzzy,
    };
  }
  if (signals.bridge) {
    // Several foci without a list to split them on raise the complexity; they never lower it.
    const extra = signals.multiFocus ? 1 : 0;
    return {
      route: Route.ITERATIVE,
      subQuestions: [],
      complexity: Math.min(MAX_COMPLEXITY, bridgeHops(signals) + extra),
      signals: signals.fired,
      decided: true,
      fuzzy,
    };
  }
  const undecided = signals.multiFocus || contentTerms(question).length >= LONG_QUESTION_TERMS;
  return {
    route: Route.SINGLE,
    subQuestions: [],
    complexity: signals.multiFocus ? 2 : 1,
    signals: signals.fired,
    decided: !undecided,
    fuzzy,
  };
}
