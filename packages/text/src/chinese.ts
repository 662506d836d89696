import { Jieba } from '@node-rs/jieba';
import { dict, idf } from '@node-rs/jieba/dict.js';
import { memoizeByText } from './memo.js';

/**
 * Chinese text has no capitals and no spaces: its words come from jieba's segmenter, one
 * instance per process for retrieval and reasoning alike.
 */

const HAN = /[\u3400-\u9fff\uf900-\ufaff]/;

export const hasHan = (text: string): boolean => HAN.test(text);

/**
 * Function words and the words that ask rather than tell: too frequent to tell passages apart,
 * and never what a hop must match.
 */
export const CHINESE_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    '的 地 得 了 着 过 是 在 和 与 及 或 也 都 而 就 被 把 这 那 之 其 于 对 为 以 个 吗 呢 吧 啊 从 向 并 且 又 ' +
    '由 给 让 哪 谁 什么 哪个 哪些 哪家 哪位 哪种 哪国 哪所 哪座 哪部 哪里 哪儿 哪一年 何时 何地 几 多少 怎么 怎样 如何 为什么 请问 是否 有没有 一个 该 此 他 她 它 他们 她们 它们'
  ).split(' '),
);

// Loading the dictionary takes ~170 ms and ~30 MB: once per process, and only when a text
// actually contains Chinese.
let segmenter: Jieba | undefined;

function jieba(): Jieba {
  segmenter ??= Jieba.withDict(dict);
  return segmenter;
}

/**
 * Segments a run of Han characters in jieba's search mode, which emits a long word and its
 * dictionary sub-words ("第十二条" → 第十, 十二, 二条, 第十二, 十二条, 第十二条): the whole
 * word still matches exactly and scores highest, the parts give partial matches ("属于" in a
 * question meets "隶属于" in a passage).
 */
export function segmentChinese(run: string, out: string[], dropStopWords: boolean): void {
  for (const word of jieba().cutForSearch(run, true)) {
    if (!dropStopWords || !CHINESE_STOP_WORDS.has(word)) out.push(word);
  }
}

export interface TaggedWord {
  word: string;
  tag: string;
  start: number;
  end: number;
}

/**
 * jieba's words (precise mode, one reading per word) with their part-of-speech tags and character
 * offsets, spaces left out. Remembered per text: reasoning tags the same chunk sentences and
 * question phrases in every hop. Shared, so read-only.
 */
export const taggedWords: (text: string) => readonly Readonly<TaggedWord>[] = memoizeByText((text) => {
  let offset = 0;
  const words: TaggedWord[] = [];
  for (const { word, tag } of jieba().tag(text, true)) {
    const start = offset;
    offset += word.length;
    if (word.trim()) words.push({ word, tag, start, end: offset });
  }
  return Object.freeze(words);
});

// jieba's table of inverse document frequencies over a general Chinese corpus (the one its
// keyword extraction uses): parsed once per process, and only when a weight is asked for.
let specificity: { byWord: Map<string, number>; median: number } | undefined;

function specificityTable(): { byWord: Map<string, number>; median: number } {
  if (specificity) return specificity;
  const byWord = new Map<string, number>();
  for (const line of new TextDecoder().decode(idf).split('\n')) {
    const [word, value] = line.trim().split(' ');
    const weight = Number(value);
    if (word && Number.isFinite(weight)) byWord.set(word, weight);
  }
  const sorted = [...byWord.values()].sort((a, b) => a - b);
  specificity = { byWord, median: sorted[Math.floor(sorted.length / 2)] ?? 1 };
  return specificity;
}

/**
 * How much a term tells texts apart: its inverse document frequency in jieba's general Chinese
 * corpus ("事件" 5.7, "摔倒" 8.9, "特首" 12.1). A term the table lacks (a rare name, a word in
 * another script) weighs the table's median, as jieba's own keyword extraction weighs it: no
 * word of the table is known to be common, and a name is rarely the commonest word of a text.
 */
export function termSpecificity(term: string): number {
  const table = specificityTable();
  return table.byWord.get(term) ?? table.median;
}
