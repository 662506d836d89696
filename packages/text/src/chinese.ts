import { Jieba } from '@node-rs/jieba';
import { dict } from '@node-rs/jieba/dict.js';

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

/** jieba's words (precise mode, one reading per word) with their part-of-speech tags and character offsets, spaces left out. */
export function taggedWords(text: string): TaggedWord[] {
  let offset = 0;
  const words: TaggedWord[] = [];
  for (const { word, tag } of jieba().tag(text, true)) {
    const start = offset;
    offset += word.length;
    if (word.trim()) words.push({ word, tag, start, end: offset });
  }
  return words;
}
