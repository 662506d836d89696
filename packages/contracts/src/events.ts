import type { QaEvent__Output } from './generated/hopline/v1/QaEvent.js';

/** Event names on the SSE stream and in docs, one per QaEvent variant. */
export const EVENT_NAMES = {
  route: 'route',
  hopStarted: 'hop_started',
  retrieval: 'retrieval',
  hopAnswer: 'hop_answer',
  token: 'token',
  citations: 'citations',
  done: 'done',
  error: 'error',
  accepted: 'accepted',
  restarted: 'restarted',
} as const;

export type QaEventKind = keyof typeof EVENT_NAMES;
export type QaEventName = (typeof EVENT_NAMES)[QaEventKind];

export function eventKind(event: QaEvent__Output): QaEventKind {
  if (!event.event) throw new Error(`event ${event.seq} of question ${event.questionId} has no payload`);
  return event.event;
}

/** Done and error end a question's stream; nothing follows them. */
export function isTerminal(event: QaEvent__Output): boolean {
  return event.event === 'done' || event.event === 'error';
}
