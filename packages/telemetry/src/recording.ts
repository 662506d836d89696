/**
 * Whether this process records spans. It does not when nothing exports them and no sampler was
 * asked for (`tracingFromEnv`): every span is then a non-recording one whose only use is its
 * trace id (in logs) and the context it carries on (in headers). A span opened under such a
 * span adds no trace id and nothing anyone can read, yet costs an id, a sampler call and a
 * context switch; a question opens dozens. So, unrecorded, work runs in its parent's span.
 */
let recorded = true;

export function spansRecorded(): boolean {
  return recorded;
}

export function setSpansRecorded(value: boolean): void {
  recorded = value;
}
