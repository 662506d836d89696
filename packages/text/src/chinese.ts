import { Jieba } from '@node-rs/jieba';
import { dict } from '@node-rs/jieba/dict.js';

/** Function words too frequent to discriminate between passages. */
export const CHINESE_STOP_WORDS: ReadonlySet<string> = new Set(
  '的 了 是 在 和 与 及 或 也 都 而 就 被 把 这 那 之 其 于 对 为 以 个 着 吗 呢 吧 啊 哪 谁 什么 哪个 哪些 一个'.split(
    ' ',
  ),
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
 * word still matches exactly and scores highest, the parts give partial matches.
 */
export function segmentChinese(run: string, out: string[], dropStopWords: boolean): void {
  for (const word of jieba().cutForSearch(run, true)) {
    if (!dropStopWords || !CHINESE_STOP_WORDS.has(word)) out.push(word);
  }
}
