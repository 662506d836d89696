import type { TaggedWord } from './chinese.js';
import { CHINESE_STOP_WORDS, hasHan, taggedWords } from './chinese.js';

/**
 * Names in Chinese text. Chinese has no capitals and no spaces, so names come from jieba's
 * part-of-speech tags (person, place, organisation, other proper noun, and the words its HMM
 * found that no dictionary knows, which are mostly names) and from the phrases that state a
 * relation ("负责人是李明", "隶属于数据平台部", "由张伟负责").
 */

const ALL_HAN = /^[\u3400-\u9fff\uf900-\ufaff]+$/;

// Person, place, organisation, other proper noun (and their variants).
const NAME_TAGS = /^(?:nr|nrt|nrfg|ns|nt|nz)$/;
/** An unknown word the HMM assembled ("李明", "王芳", "蓝鳍"): jieba tags it x, as it does punctuation. */
const isNewWord = (word: TaggedWord) => word.tag === 'x' && ALL_HAN.test(word.word) && word.word.length >= 2;
const isName = (word: TaggedWord) => NAME_TAGS.test(word.tag) || isNewWord(word);
const isNounish = (word: TaggedWord) => /^(?:n|nr|nrt|nrfg|ns|nt|nz|ng|nl|j|eng)$/.test(word.tag) || isNewWord(word);

// Heads that make a name of what precedes them: "北风" + "实验室", "数据平台" + "部".
const ORGANISATION_HEADS: ReadonlySet<string> = new Set(
  '实验室 公司 集团 大学 学院 学校 中学 小学 医院 银行 研究所 研究院 研究中心 中心 部 部门 局 厅 署 委员会 协会 学会 基金会 项目 工作室 俱乐部 球队 队 乐队 出版社 报社 电视台 事务所 工厂 厂'.split(
    ' ',
  ),
);

/** Role nouns a Chinese question asks about: "X的负责人", "X的创始人". */
export const CHINESE_ROLE_NOUNS: readonly string[] = (
  '负责人 创始人 创办人 作者 导演 主管 经理 总经理 领导 董事长 总裁 首席执行官 校长 院长 部长 主任 所长 总监 教练 主教练 队长 老板 ' +
  '法人 法定代表人 编剧 制片人 主演 演员 歌手 作曲 设计师 建筑师 发明人 父亲 母亲 丈夫 妻子 儿子 女儿 上级 母公司 所属'
).split(' ');

// A name follows these: "负责人是李明", "隶属于数据平台部", "毕业于清华大学".
const NAME_FOLLOWS = new Set([
  '隶属于',
  '隶属',
  '属于',
  '归属于',
  '归属',
  '就职于',
  '任职于',
  '供职于',
  '加入',
  '来自',
  '位于',
  '出生于',
  '生于',
  '毕业于',
  '嫁给',
  '娶',
]);
const COPULAS = new Set(['是', '为', '：', ':']);
// A name precedes these: "李明担任…", "由张伟负责".
const NAME_PRECEDES = new Set([
  '担任',
  '出任',
  '兼任',
  '任职',
  '负责',
  '领导',
  '主导',
  '牵头',
  '创立',
  '创办',
  '创建',
  '执导',
  '主演',
  '编写',
  '管理',
]);

export interface ChineseName {
  text: string;
  start: number;
  end: number;
  /** Read where the text states a relation ("负责人是…", "隶属于…"), not just tagged as a name. */
  stated: boolean;
}

/** The noun phrase that starts at word `from`: nouns and names up to the first other word (at most four). */
function nounPhraseFrom(words: readonly TaggedWord[], from: number): [number, number] | undefined {
  let to = from;
  while (to < words.length && to - from < 4 && isNounish(words[to] as TaggedWord)) to += 1;
  return to > from ? [from, to] : undefined;
}

/** The noun phrase that ends just before word `before` (at most four words). */
export function nounPhraseBefore(words: readonly TaggedWord[], before: number): [number, number] | undefined {
  let from = before;
  while (from > 0 && before - from < 4 && isNounish(words[from - 1] as TaggedWord)) from -= 1;
  return from < before ? [from, before] : undefined;
}

/**
 * Proper names in Chinese text, each once per position: tagged names (extended by an
 * organisation head that follows, "北风" + "实验室"), and the noun phrases next to words that
 * state a relation. Single characters are never names.
 */
export function chineseNames(text: string): ChineseName[] {
  const words = taggedWords(text);
  const found = new Map<string, ChineseName>();
  const add = (range: [number, number] | undefined, stated: boolean) => {
    if (!range) return;
    // One generic noun next to a relation word ("加入公司") is not a name; two words or a tagged name are.
    if (stated && range[1] - range[0] < 2 && !words.slice(range[0], range[1]).some(isName)) return;
    const first = words[range[0]] as TaggedWord;
    const last = words[range[1] - 1] as TaggedWord;
    const name = text.slice(first.start, last.end).trim();
    if ([...name].length < 2 || !hasHan(name) || CHINESE_STOP_WORDS.has(name)) return;
    const key = `${first.start}:${name}`;
    const current = found.get(key);
    if (!current || (stated && !current.stated))
      found.set(key, { text: name, start: first.start, end: last.end, stated });
  };

  words.forEach((word, index) => {
    if (isName(word)) {
      let end = index + 1;
      while (end < words.length && end - index < 3 && ORGANISATION_HEADS.has((words[end] as TaggedWord).word)) end += 1;
      add([index, end], false);
    }
    const next = words[index + 1];
    if (NAME_FOLLOWS.has(word.word)) add(nounPhraseFrom(words, index + 1), true);
    if (CHINESE_ROLE_NOUNS.includes(word.word) && next && COPULAS.has(next.word))
      add(nounPhraseFrom(words, index + 2), true);
    if (NAME_PRECEDES.has(word.word)) {
      // "由张伟负责": the phrase between 由 and the verb; "李明担任…": a tagged name before the verb.
      const phrase = nounPhraseBefore(words, index);
      const afterBy = phrase !== undefined && words[phrase[0] - 1]?.word === '由';
      if (phrase && (afterBy || words.slice(phrase[0], phrase[1]).some(isName))) add(phrase, true);
    }
  });
  return [...found.values()].sort((a, b) => a.start - b.start);
}
