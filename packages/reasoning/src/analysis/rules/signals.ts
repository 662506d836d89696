import { CHINESE_ROLE_NOUNS, contentTerms } from '@hopline/text';
import {
  choiceOptions,
  chineseComparisonOptions,
  asksComparative,
  comparesTimesOfSeveral,
  conjoinedAnchors,
  questionAnchors,
  timedEvents,
} from '../../offline/question.js';
import { inSetting, joinsItems, listSetting } from '../../offline/event-list.js';
import { respectiveItems } from '../../offline/respectively.js';
import { determinedRoleNoun, isRoleNoun, roleNounIn } from '../../offline/relations.js';
import type { ReasoningSwitch } from '../../switches.js';
import { isOn } from '../../switches.js';

/**
 * The rule signals a question's wording carries. Each detector is a regular expression or a
 * word-list lookup: the whole set runs in microseconds, so every question gets it.
 */

export interface QuestionSignals {
  /** Names of the signals that fired, e.g. "compare", "bridge:relative-clause". */
  fired: string[];
  /** The independent things the question asks about (choice options, compared entities). */
  foci: string[];
  /** The question is about several independent foci. */
  multiFocus: boolean;
  /** One part's answer is needed to ask the next. */
  bridge: boolean;
  /**
   * Each focus is a whole sub-question already, looked up as it stands: an event compared by
   * date, or a distributive question's item with its setting and its share of the predicate.
   */
  fociAsked: boolean;
  /** A role noun ("director", "负责人") the foci's documents name, not the foci themselves. */
  roleNoun: string | undefined;
  /**
   * Links the question chains through: relative pronouns after its first words ("the city
   * where…") and role nouns ("the performer of…", "X's composer", "the birthplace of…").
   */
  links: number;
  anchors: string[];
}

const COMPARE = /\b(compare|comparison|versus|vs\.?|difference between|differ(?:ence)?s?)\b|对比|比较|区别|异同/i;
// "the rule that makes a difference between A and B": a relative clause describes the one thing
// asked about by how it sets A and B apart; neither is a focus of its own.
const DIFFERENCE_DESCRIBES = /\s(?:that|which|who)\s+(?:[\w'-]+\s+){0,4}?(?:differences?\s+between|differs?)\b/i;
const SEPARATELY = /\b(respectively|each of)\b|分别|各自/i;
const SHARED = /\b(both|same|in common|alike|also)\b|都|共同/i;
const WHICH = /\b(which|who|what)\b|哪/i;
const QUESTION_MARKS = /[?？]/g;

// "the team that won …", "the film which …", "the actor who …", "a city where …"
const RELATIVE_CLAUSE = /\b(?:the|a|an)\s+(?:[\w'-]+\s+){0,3}?[\w'-]+\s+(?:that|which|who|whose|whom|where|when)\b/i;
// "the coach of the team", "the director of film X", "the actress in Lanterns Over Dunmore": "in" only
// before a title ("the president in 1990" holds the office then, in no other entity).
const ROLE_OF = /\bthe\s+(?:[\w-]+\s+){0,2}?([\w-]+)\s+(?:(?:of|for|behind)\s+|in\s+(?=["“]?\p{Lu}))/giu;
// "X's father", "Brightwater Cola's manufacturer", "X's birthplace a part of": either word may be the role.
const POSSESSIVE_ROLE = /['’]s\s+(?:([\w-]+)\s+)?([\w-]+)/gi;
// "Whose sister played …": the role-holder is found first, then whose it is.
const WHOSE_ROLE = /^\s*whose\s+([\w-]+)/gi;
// "a sitcom created by", "the album released by"
const PARTICIPLE_BY =
  /\b(?:created|directed|written|founded|owned|produced|performed|composed|published|released|designed|developed|built|coached|managed|hosted|sung|played|voiced|invented|discovered|named)\s+(?:by|after)\b/i;
// The role nouns the name finder reads a holder after ("负责人是李明"), longest first: "总经理" before "经理".
const CHINESE_ROLES = `(?:${[...CHINESE_ROLE_NOUNS].sort((a, b) => b.length - a.length).join('|')})`;
// "X 的负责人属于哪个部门"
const CHINESE_ROLE_BRIDGE = new RegExp(`的[^的？?]{0,6}${CHINESE_ROLES}`);
// "X的负责人是谁？", "谁是X的负责人？": the role is what "谁" asks for, the answer's own relation.
const CHINESE_ROLE_ASKED = new RegExp(
  `^[^的]*的[^的？?]{0,6}${CHINESE_ROLES}(?:是谁|是哪位|是什么人)[？?]?\\s*$|^\\s*谁是[^的]*的[^的？?]{0,6}${CHINESE_ROLES}[？?]?\\s*$`,
);
// "X 的 Y 的 Z": what stands between two "的" (the lookahead leaves the second to open the next).
const BETWEEN_DE = /的([^的？?]+)(?=的)/g;
const RELATIVE_PRONOUN = /\b(?:that|which|who|whose|whom|where)\b/gi;
// "Who coaches …", "Who is the coach of …": the word "who" asks for, when it is a role.
const WHO_ASKS = /^\s*who\s+(?:(?:is|was|are|were|has\s+been)\s+(?:the\s+)?)?([\w-]+)/i;
// "birth place", "birth city" in two words; "birthplace" is a role noun of its own, counted once.
const BIRTH_PLACE = /\bbirth\s+(?:city|place)\b/gi;

/**
 * A nested Chinese possessive ("X的Y的Z"). Two "的" with a list between them belong to two items
 * ("A的B和C的D"); a name holding a conjunction's character ("和平大桥", "普及计划") lists nothing.
 */
const chineseBridge = (question: string, roleAsked: boolean): boolean =>
  (CHINESE_ROLE_BRIDGE.test(question) && !(roleAsked && CHINESE_ROLE_ASKED.test(question))) ||
  [...question.matchAll(BETWEEN_DE)].some((match) => !joinsItems(match[1] ?? ''));

export function detectSignals(question: string, switchedOff: readonly ReasoningSwitch[] = []): QuestionSignals {
  const fired: string[] = [];
  const anchors = questionAnchors(question);
  const options = choiceOptions(question);
  // The events a question about their times lists, or the options of a Chinese comparison. An
  // event is looked up in the time the question sets the whole list in ("2031年4月，A和B…"),
  // unless it states its own: the news of other years shares its common words.
  const setting = isOn(switchedOff, 'listSettings') ? listSetting(question) : undefined;
  const events =
    options.length === 0 && isOn(switchedOff, 'timedEvents')
      ? timedEvents(question).map((event) => inSetting(event, setting))
      : [];
  // "A和B分别在几月几日开通地铁？": each item with the setting and the predicate it shares, so no
  // item's sub-question loses the words the question states once for all of them.
  const respective =
    options.length === 0 && events.length < 2 && isOn(switchedOff, 'respectiveFoci')
      ? respectiveItems(question).map((item) => item.query)
      : [];
  const chineseOptions =
    [events, respective].find((items) => items.length >= 2) ??
    (options.length === 0 ? chineseComparisonOptions(question) : []);
  const questionMarks = question.match(QUESTION_MARKS)?.length ?? 0;

  if (COMPARE.test(question) && !DIFFERENCE_DESCRIBES.test(question)) fired.push('compare');
  if (SEPARATELY.test(question)) fired.push('separately');
  if (options.length === 2) fired.push(asksComparative(question) ? 'choice:comparative' : 'choice:or');
  if (events.length >= 2) fired.push('events:timed');
  else if (respective.length >= 2) fired.push('separately:items');
  else if (chineseOptions.length >= 2) fired.push('compare:zh');
  if (questionMarks >= 2) fired.push(`questions:${questionMarks}`);
  if (anchors.length >= 2 && SHARED.test(question) && /\band\b|和|与/.test(question)) fired.push('shared:both');
  if (anchors.length >= 2 && WHICH.test(question) && asksComparative(question) && /\bor\b/.test(question))
    fired.push('which:comparative');

  const joined = conjoinedAnchors(question, anchors);
  if (joined.length === 2) fired.push('conjunction');
  const foci =
    options.length === 2
      ? options
      : chineseOptions.length >= 2
        ? chineseOptions
        : joined.length === 2
          ? joined
          : fired.length > 0 && anchors.length >= 2
            ? anchors
            : [];
  const multiFocus = foci.length >= 2 || questionMarks >= 2;

  const ofRole = roleNounIn(ROLE_OF, question);
  const possessiveRole = roleNounIn(POSSESSIVE_ROLE, question);
  if (RELATIVE_CLAUSE.test(question)) fired.push('bridge:relative-clause');
  if (ofRole) fired.push('bridge:role-of');
  if (possessiveRole) fired.push('bridge:possessive');
  if (PARTICIPLE_BY.test(question)) fired.push('bridge:participle');
  if (roleNounIn(WHOSE_ROLE, question)) fired.push('bridge:whose-role');
  // Things compared by their times are each dated in their own documents: a "的" inside one names
  // it ("X的Y的发布会"), and leads to no entity the answer needs first.
  if (chineseBridge(question, isOn(switchedOff, 'roleAsked')) && !comparesTimesOfSeveral(question))
    fired.push('bridge:zh-de');
  const bridge = fired.some((signal) => signal.startsWith('bridge:'));

  // The opening "Who…"/"Which…" asks; a relative pronoun after it links one part to the next.
  const relatives = [...question.matchAll(RELATIVE_PRONOUN)].filter((match) => match.index > 3).length;
  // A role "who" asks for is the answer's own relation: it leads to no entity before the answer.
  const askedRole = isOn(switchedOff, 'roleAsked') && contentTerms(WHO_ASKS.exec(question)?.[1] ?? '').some(isRoleNoun);
  const roles =
    contentTerms(question).filter((term) => isRoleNoun(term)).length +
    (question.match(BIRTH_PLACE)?.length ?? 0) -
    (askedRole ? 1 : 0);
  return {
    fired,
    foci,
    multiFocus,
    bridge,
    fociAsked: events.length >= 2 || respective.length >= 2,
    // An event's own words may hold a role noun ("选举新领导"); its date is still in its own document.
    roleNoun:
      events.length >= 2
        ? undefined
        : (ofRole ??
          possessiveRole ??
          (isOn(switchedOff, 'determinedRole') ? determinedRoleNoun(question) : undefined)),
    links: relatives + roles,
    anchors,
  };
}
