/**
 * Whether a Content-Type header has no parameter but `charset=utf-8`. JSON is UTF-8 (RFC 8259),
 * and so is NDJSON: a body declared in another charset would be misread, so it is refused.
 */
export function hasOnlyUtf8Charset(header: string | undefined): boolean {
  const [, ...parameters] = (header ?? '').split(';');
  return parameters.every((parameter) => /^\s*charset\s*=\s*(?:utf-8|"utf-8")\s*$/i.test(parameter));
}
