/** One Server-Sent Event as received. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Parses an SSE byte stream into events (the WHATWG rules: fields per line, a blank line
 * ends an event, comment lines start with ":").
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let current: { id?: string; event?: string; data: string[] } = { data: [] };
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\n|\r/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (current.data.length > 0 || current.event) {
          yield {
            ...(current.id === undefined ? {} : { id: current.id }),
            event: current.event ?? 'message',
            data: current.data.join('\n'),
          };
        }
        current = { data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') current.data.push(value);
      else if (field === 'event') current.event = value;
      else if (field === 'id') current.id = value;
    }
  }
}
