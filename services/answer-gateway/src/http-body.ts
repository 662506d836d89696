import type { IncomingMessage } from 'node:http';
import { problems } from './problem.js';

/**
 * `application/json`, with no parameter but `charset=utf-8` (RFC 8259 JSON is UTF-8): not
 * `application/json-patch+json`, not another charset the body would be misread in.
 */
function isJsonContentType(header: string | undefined): boolean {
  const [type = '', ...parameters] = (header ?? '').split(';');
  if (type.trim().toLowerCase() !== 'application/json') return false;
  return parameters.every((parameter) => /^\s*charset\s*=\s*(?:utf-8|"utf-8")\s*$/i.test(parameter));
}

/**
 * Reads a JSON body, refusing other content types, bodies over `maxBytes` (the setting named
 * `limitName`) and malformed JSON.
 */
export async function readJsonBody(request: IncomingMessage, maxBytes: number, limitName: string): Promise<unknown> {
  if (!isJsonContentType(request.headers['content-type'])) throw problems.unsupportedMediaType();
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
