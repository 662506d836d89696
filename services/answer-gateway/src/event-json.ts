import { EVENT_NAMES, eventKind, type QaEvent__Output } from '@hopline/contracts';

/**
 * The version of the event contract both transports carry: gRPC streams this message as is,
 * SSE sends its JSON form and names the version in the `Hopline-Event-Schema` header.
 */
export const EVENT_SCHEMA = 'hopline.v1.QaEvent';

export interface RenderedEvent {
  /** The SSE event id and the resume point: the event's seq. */
  id: number;
  name: string;
  data: Record<string, unknown>;
}

/**
 * One QaEvent as the HTTP API shows it: the variant's own fields plus the question id, seq,
 * attempt and time, under the variant's snake_case name.
 */
export function renderEvent(event: QaEvent__Output): RenderedEvent {
  const kind = eventKind(event);
  const payload: object = event[kind] ?? {};
  const citations = 'citations' in payload && Array.isArray(payload.citations) ? payload.citations : undefined;
  return {
    id: event.seq,
    name: EVENT_NAMES[kind],
    data: {
      questionId: event.questionId,
      seq: event.seq,
      attempt: event.attempt,
      atUnixMs: event.atUnixMs,
      ...payload,
      ...(citations ? { citations: citations.map(withoutPresenceMarker) } : {}),
    },
  };
}

/**
 * A citation without `_sourceUri`: protobuf.js marks a set proto3 `optional` field with a
 * synthetic oneof of that name, which says nothing `sourceUri` itself does not.
 */
function withoutPresenceMarker(citation: object): object {
  const { _sourceUri, ...rest } = citation as { _sourceUri?: unknown };
  return rest;
}
