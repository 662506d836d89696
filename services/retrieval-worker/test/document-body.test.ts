import { describe, expect, it } from 'vitest';
import { createMemoryBroker } from '@hopline/bus';
import { documentBodyStream, splitDocumentBody, subjects, type IngestCommand__Output } from '@hopline/contracts';
import { withDocumentBody } from '../src/document-body.js';

const document = { tenantId: 'acme', kbId: 'kb', docId: 'report', version: 1, title: 'Report', effectiveDate: '' };
const command = (fields: { text?: string; bodyParts?: number; bodyId?: string }): IngestCommand__Output => ({
  op: 'upsert',
  upsert: { ...document, text: '', sourceUri: '', metadata: {}, ...fields },
});

async function bodyStreamWith(bodyId: string, parts: Uint8Array[]) {
  const bodies = await createMemoryBroker().connect().durableStream(documentBodyStream);
  for (const [index, part] of parts.entries()) {
    await bodies.publish(subjects.documentBody('acme', 'kb', bodyId), part, { msgId: `body/${bodyId}/${index}` });
  }
  return bodies;
}

describe('retrieval-worker - document bodies in parts', () => {
  it('ingestion - a body published in parts is joined back into the command before indexing', async () => {
    const text = 'Zeile für Zeile, 第一章. '.repeat(2_000);
    const parts = splitDocumentBody(Buffer.from(text), 1_000);
    const bodies = await bodyStreamWith('b1', parts);
    const joined = await withDocumentBody(bodies, command({ bodyParts: parts.length, bodyId: 'b1' }));
    expect(joined.upsert?.text).toBe(text);
  });

  it('ingestion - a command whose text is whole is passed on untouched', async () => {
    const bodies = await bodyStreamWith('unused', []);
    const whole = command({ text: 'Short.' });
    expect(await withDocumentBody(bodies, whole)).toBe(whole);
  });

  it('ingestion - a body with a part missing is retried as unavailable, never indexed short', async () => {
    const parts = splitDocumentBody(Buffer.from('x'.repeat(3_000)), 1_000);
    const bodies = await bodyStreamWith('b2', parts.slice(0, 2));
    await expect(withDocumentBody(bodies, command({ bodyParts: 3, bodyId: 'b2' }), 50)).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining('read 2 of its 3 body parts') as string,
    });
  });

  it('ingestion - a command that counts body parts but names no body is invalid, for the dead letters', async () => {
    const bodies = await bodyStreamWith('unused', []);
    await expect(withDocumentBody(bodies, command({ bodyParts: 2 }))).rejects.toMatchObject({
      code: 'invalid_argument',
    });
  });
});
