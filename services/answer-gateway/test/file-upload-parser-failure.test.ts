import { describe, expect, it, vi } from 'vitest';
import type * as Documents from '@hopline/documents';
import { createLogger } from '@hopline/telemetry';

import { bearer, startTestGateway } from './support/harness.js';

// A parser that fails on its own, as when its worker thread cannot start or stops without an
// answer: the one way to reach that path without breaking the installation under the test.
vi.mock('@hopline/documents', async (importOriginal) => {
  const documents = await importOriginal<typeof Documents>();
  return {
    ...documents,
    parseDocument: (name: string, data: Uint8Array) =>
      name.endsWith('.pdf')
        ? Promise.reject(new Error('the document parser stopped without an answer (exit code 1)'))
        : documents.parseDocument(name, data),
  };
});

describe('answer-gateway ingestion - a document parser that fails on its own', () => {
  it('upload - is a 500 naming the file, logged with its cause, not a 422 blaming the file; the files before it stay accepted', async () => {
    const lines: string[] = [];
    const logger = createLogger('answer-gateway', {
      level: 'error',
      destination: { write: (line) => lines.push(line) },
    });
    await using t = await startTestGateway({ logger });
    const form = new FormData();
    form.append('file', new Blob(['Bluefin was founded in 2019.']), 'plain.txt');
    form.append('file', new Blob(['%PDF-1.4']), 'manual.pdf');
    form.append('file', new Blob(['Atlas is owned by Dana.']), 'after.txt');
    const response = await fetch(`${t.baseUrl}/v1/kbs/projects/documents`, {
      method: 'POST',
      headers: bearer(t.keys.alice),
      body: form,
    });

    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({
      type: 'urn:hopline:problem:internal',
      detail:
        "manual.pdf: the document parser failed, not the file; the error was logged with the request's trace id; the 1 file(s) before it were accepted",
    });
    const logged = lines.map((line) => JSON.parse(line) as { msg: string; error?: { cause?: { message?: string } } });
    expect(logged).toContainEqual(
      expect.objectContaining({
        msg: 'request failed',
        error: expect.objectContaining({
          cause: expect.objectContaining({
            message: 'the document parser stopped without an answer (exit code 1)',
          }) as unknown,
        }) as unknown,
      }),
    );
  });
});
