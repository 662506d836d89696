import type { IncomingMessage } from 'node:http';
import { problems } from './problem.js';

/**
 * Reads a JSON body, refusing other content types, bodies over `maxBytes` (the setting named
 * `limitName`) and malformed JSON.
 */
export async function readJsonBody(request: IncomingMessage, maxBytes: number, limitName: string): Promise<unknown> {
  const contentType = request.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(contentType)) throw problems.unsupportedMediaType();
  const declared = Number(request.headers['content-length'] ?? '0');
  if (declared > maxBytes) throw problems.payloadTooLarge(maxBytes, limitName);
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of request as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > maxBytes) throw problems.payloadTooLarge(maxBytes, limitName);
    parts.push(part);
  }
  const text = Buffer.concat(parts).toString('utf8');
  if (text.trim() === '') throw problems.malformedJson('the body is empty');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw problems.malformedJson((error as Error).message);
  }
}
