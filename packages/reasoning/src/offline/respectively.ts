import { hasHan } from '@hopline/text';
import { namesOnlyAKind } from './event-kind.js';
import { listItems, listsStrongly, splitWeak } from './event-list.js';

/**
 * The items of a distributive ("respectively") question, each with the predicate they share:
 * "A和B分别在几月几日开通地铁？" asks "A开通地铁" and "B开通地铁", "When were A and B founded,
 * respectively?" asks "A founded" and "B founded". The plan splits such a question into one
 * sub-question per item and each keeps only its item's words; the predicate (the words after
 * "分别"/"各自", or the words after the list before "respectively") says which of an item's
 * documents is the one asked about. Read from the grammar of coordination alone.
 */

export interface RespectiveItem {
  /** The item as the question lists it ("青川市"). */
  item: string;
  /** The item with the setting and the shared predicate, its asking words left out ("2031年4月青川市开通地铁"). */
  event: string;
  /**
   * What a sub-question retrieves the item by: the item with the setting and the whole predicate,
   * its asking words left out ("2031年4月青川市开通地铁"), or the scene where the predicate names
   * only a kind of event. A predicate paired item by item may be misread ("参与了会议与展览" joins
   * two things of each item), and a query holding a sibling's words loses less than one missing
   * its own.
   */
  query: string;
  /**
   * The item with the setting alone ("2031年上半年青川市"), where the predicate names only a kind
   * of event ("出了什么大事"); undefined where it says what happened.
   */
  scene?: string;
}

const CLAUSE = /[，,：:；;]/;
const CHINESE_DISTRIBUTIVE = /分别|各自/;
// Asking words carry no content a document states; the predicate keeps the rest.
const CHINESE_ASKING =
  /什么时候|什么|哪些|哪个|哪一天|哪天|哪里|哪儿|哪|几月几日|几月几号|几月|几日|几号|几|多少|如何|怎样|怎么样|何时|是否|吗|呢|[？?]/g;
// "When were A and B founded, respectively?": the words between the auxiliary and "respectively".
const ENGLISH_RESPECTIVELY =
  /^(?:(?:what|which|how)(?:\s+\w+)?|when|where|who)\s+(?:were|was|did|do|does|are|is|had|have)\s+(.+?),?\s+respectively\s*\??\s*$/i;
// The list ends at its last name (a capitalised word or a number); the predicate follows it.
const LAST_NAME_WORD = /^(.*[\p{Lu}\d][^\s]*)\s+([^\p{Lu}\d]+)$/u;
const ENGLISH_LIST = /\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+/i;
const MIN_ITEMS = 2;

function chineseItems(question: string): RespectiveItem[] {
  const clauses = question.split(CLAUSE);
  const at = clauses.findIndex((clause) => CHINESE_DISTRIBUTIVE.test(clause));
  if (at < 0) return [];
  const clause = clauses[at] as string;
  const marker = CHINESE_DISTRIBUTIVE.exec(clause) as RegExpExecArray;
  // Clauses before the list only set the scene ("2020年6月，"): every item is in it.
  const setting = clauses.slice(0, at).join('');
  const predicate = clause
    .slice(marker.index + marker[0].length)
    .replace(CHINESE_ASKING, '')
    .trim();
  const head = clause.slice(0, marker.index);
  const listed = listItems(head);
  // "2022年6月和2023年7月，申花分别…": the list is the setting, each of its items one time (or
  // place) of the subject before 分别, which every item shares.
  const settings = listed.length < 2 && setting ? listItems(setting) : [];
  const items = settings.length >= 2 ? settings : listed;
  const shared = (item: string) => (settings.length >= 2 ? `${item}${head.trim()}` : `${setting}${item}`);
  // "2031年3月和8月分别出了关于A和B的事": a predicate joining as many things as the items
  // pairs them in order, as "respectively" does; otherwise every item gets it whole ("大事或其影响",
  // "事件以及日期" ask two things of each).
  const paired = listsStrongly(predicate) ? [predicate] : splitWeak(predicate);
  const predicates = paired.length === items.length ? paired : items.map(() => predicate);
  // Documents say what happened, not its kind: such a predicate is no words to ask of them.
  const kindOnly = namesOnlyAKind(predicate);
  return items.map((item, index) => ({
    item,
    event: `${shared(item)}${predicates[index] as string}`,
    query: kindOnly ? shared(item) : `${shared(item)}${predicate}`,
    ...(kindOnly ? { scene: shared(item) } : {}),
  }));
}

function englishItems(question: string): RespectiveItem[] {
  const phrase = ENGLISH_RESPECTIVELY.exec(question)?.[1];
  const split = phrase ? LAST_NAME_WORD.exec(phrase) : null;
  if (!split?.[1] || !split[2]) return [];
  const predicate = split[2].trim();
  const items = split[1]
    .split(ENGLISH_LIST)
    .map((item) => item.replace(/^the\s+/i, '').trim())
    .filter((item) => item.length > 0);
  return items.map((item) => ({ item, event: `${item} ${predicate}`, query: `${item} ${predicate}` }));
}

/** The items a distributive question lists, each with the predicate; [] when it lists fewer than two. */
export function respectiveItems(question: string): RespectiveItem[] {
  const items = hasHan(question) ? chineseItems(question) : englishItems(question);
  return items.length >= MIN_ITEMS ? items : [];
}
