import { lastUserMessage, systemPrompt, type ChatRequestBody, type ScriptedReply } from '@hopline/test-support';

/** Reading the prompts the hop loop sends to the scripted OpenAI-compatible server. */

export const isExtraction = (body: ChatRequestBody) => /retrieved documents/.test(systemPrompt(body));
export const isSynthesis = (body: ChatRequestBody) => /numbered evidence/.test(systemPrompt(body));

const escaped = (title: string) => JSON.stringify(title).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The label (E1, E2…) the extraction prompt gave the chunk with this title. */
export const labelOf = (body: ChatRequestBody, title: string) =>
  new RegExp(`(E\\d+) title=${escaped(title)}`).exec(lastUserMessage(body))?.[1] ?? 'E1';

/** The evidence number the synthesis prompt gave the chunk with this title. */
export const numberOf = (body: ChatRequestBody, title: string) =>
  new RegExp(`\\[(\\d+)\\] title=${escaped(title)}`).exec(lastUserMessage(body))?.[1] ?? '1';

/** An extraction reply: the hop found nothing unless `fields` say otherwise. */
export const hopReply = (fields: Record<string, unknown>): ScriptedReply => ({
  content: JSON.stringify({
    answer: '',
    unknown: false,
    done: false,
    nextQuery: '',
    confidence: 0.9,
    cited: [],
    bridgeEntities: [],
    ...fields,
  }),
});

/**
 * The two hops of the fixtures' bridge question as a model finds them, one reply per extraction
 * in turn: the film's star (with the next search), then whom she married.
 */
export function bridgeHopsFound(): (body: ChatRequestBody) => ScriptedReply {
  let extractions = 0;
  return (body) => {
    extractions += 1;
    return extractions === 1
      ? hopReply({
          answer: 'Mirela Dunstan',
          nextQuery: 'Mirela Dunstan husband wife',
          cited: [labelOf(body, 'No Harbour (1936 film)')],
          bridgeEntities: ['Mirela Dunstan'],
        })
      : hopReply({ answer: 'Tobias Wrenfield', done: true, cited: [labelOf(body, 'Mirela Dunstan')] });
  };
}

/** Whether `text` sits inside one fenced block of the prompt (between its nonce markers). */
export function insideFence(prompt: string, text: string): boolean {
  const at = prompt.indexOf(text);
  if (at < 0) return false;
  const opening = prompt.lastIndexOf('<<<', at);
  const nonce = /^<<<(?:DOCUMENT|DATA) ([0-9a-f]{12}) /.exec(prompt.slice(opening))?.[1];
  if (nonce === undefined) return false;
  const end = prompt.indexOf(`<<<END ${nonce}>>>`, at);
  const nextOpening = prompt.indexOf('<<<', at);
  return end >= 0 && end === nextOpening;
}
