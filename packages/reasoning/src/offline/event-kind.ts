import { chineseNames } from '@hopline/text';

/**
 * Words that name only the kind of an event ("事件", "出了什么大事"). A document says what
 * happened, not which kind of event it was: such words are no words a document about the event
 * states, and asking them of it turns away the document that reports the event.
 */

// A head noun for events closes a phrase that names its kind ("杨某被判刑的事件", "发生了重要事件").
const KIND_NOUN = /(?:事件|事情|大事|事)$/;
const KIND_SUFFIX = /的?(?:事件|事情)$/;

/**
 * Whether a predicate names only a kind of event ("发生了重大事件"): it ends in a noun for events
 * and names nobody and nothing (no name, no Latin word); one that names something ("关于某台的
 * 事件") says what it is about.
 */
export const namesOnlyAKind = (predicate: string): boolean =>
  KIND_NOUN.test(predicate) && !/[A-Za-z]/.test(predicate) && chineseNames(predicate).length === 0;

/** An event phrase without the noun that closes it by naming its kind ("韩某获释的事件" → "韩某获释"). */
export function withoutKindNoun(event: string): string {
  const bare = event.replace(KIND_SUFFIX, '');
  return bare.trim() === '' ? event : bare;
}
