import type { TaggedWord } from '@hopline/text';
import { CHINESE_STOP_WORDS, chineseNames, hasHan, nounPhraseBefore, taggedWords } from '@hopline/text';

/**
 * Chinese questions as the offline reasoner reads them. Chinese has no capitals and no spaces,
 * so words come from jieba's segmenter and names from @hopline/text's name reader (its tags, and
 * the phrases that state a relation).
 */

/** The content words of a text as written (precise mode, one reading per word), function words out. */
export function chineseWords(text: string): TaggedWord[] {
  return taggedWords(text).filter(({ word }) => /[\p{L}\p{N}]/u.test(word) && !CHINESE_STOP_WORDS.has(word));
}

/**
 * The entities a Chinese question names: tagged names, and the noun phrase a "的" hangs a role
 * or attribute on ("天穹项目的负责人" → 天穹项目), which a dictionary rarely knows as a name.
 */
export function chineseQuestionEntities(question: string): string[] {
  const words = taggedWords(question);
  const entities: string[] = [];
  const push = (range: [number, number] | undefined) => {
    if (!range) return;
    const name = question.slice((words[range[0]] as TaggedWord).start, (words[range[1] - 1] as TaggedWord).end).trim();
    if ([...name].length >= 2 && hasHan(name) && !entities.includes(name)) entities.push(name);
  };
  const possessive = words.findIndex((word) => word.word === '的');
  if (possessive > 0) push(nounPhraseBefore(words, possessive));
  for (const name of chineseNames(question))
    if (!entities.some((entity) => entity.includes(name.text))) entities.push(name.text);
  return entities;
}
