// Renders gateway events for a terminal: one line per step, tokens inline as they stream.
type Fields = Record<string, unknown>;

const str = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
const num = (value: unknown): number => (typeof value === 'number' ? value : 0);
const list = (value: unknown): Fields[] => (Array.isArray(value) ? (value as Fields[]) : []);

/**
 * One event as terminal text. `answerStreamed` says whether the answer already arrived as
 * tokens; a cached answer arrives only in its `done` event, which then prints it.
 */
export function formatEvent(name: string, data: Fields, answerStreamed = true): string {
  switch (name) {
    case 'route': {
      const subQuestions = list(data.subQuestions)
        .map((sub) => `\n    · ${str(sub.text)}`)
        .join('');
      return `route    ${str(data.route)} (decided by ${str(data.decidedBy).toLowerCase()}, complexity ${num(data.complexity)})${subQuestions}\n`;
    }
    case 'hop_started':
      return `hop ${num(data.hop)}/${num(data.maxHops)}  ${str(data.subQuestion)}\n`;
    case 'retrieval': {
      const degraded = data.degraded
        ? ` · degraded: ${list(data.degradedReasons).join(', ') || str(data.degradedReasons)}`
        : '';
      return `         retrieved ${num(data.hits)} chunks, graded ${str(data.grade).toLowerCase()}${degraded}\n`;
    }
    case 'hop_answer': {
      const answer = data.unknown ? 'UNKNOWN — not in the evidence' : str(data.answer);
      const next = data.nextQuery ? `\n         next: ${str(data.nextQuery)}` : '';
      return `         answer: ${answer} (confidence ${num(data.confidence).toFixed(2)})${next}\n`;
    }
    case 'token':
      return str(data.text);
    case 'citations':
      return '';
    case 'done': {
      const citations = list(data.citations)
        .map(
          (c) =>
            `[${num(c.index)}] ${str(c.title)} — ${str(c.docId)}${pageOrSection(c.sourceUri)} (hop ${num(c.hop)}${c.bridgeEntity ? `, via ${str(c.bridgeEntity)}` : ''})`,
        )
        .join('\n');
      const timings = (data.timings ?? {}) as Fields;
      const cachedNote = data.cached ? 'cached   answered before (same question, same kb versions)\n' : '';
      const answer = answerStreamed ? '' : `${cachedNote}${str(data.answer)}`;
      const took = data.cached ? 'cached' : `${Math.round(num(timings.totalMs))} ms`;
      return `${answer}\n\n${citations}${citations ? '\n' : ''}stop: ${str(data.stopReason).toLowerCase()} · hops ${num(data.hops)} · ${took} · question ${str(data.questionId)}\n`;
    }
    case 'restarted':
      // What the earlier attempt printed is superseded; the new attempt prints from its route on.
      return `\nrestarted (attempt ${num(data.attempt)}): ${str(data.reason)}\n`;
    case 'error':
      return `\nerror: ${str(data.code)}: ${str(data.message)}\n`;
    default:
      return '';
  }
}

/** " #page=3" for a citation whose source names its page or section, else nothing. */
function pageOrSection(sourceUri: unknown): string {
  const fragment = typeof sourceUri === 'string' ? sourceUri.split('#')[1] : undefined;
  return fragment ? ` #${fragment}` : '';
}
