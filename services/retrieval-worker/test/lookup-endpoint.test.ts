import { describe, expect, it } from 'vitest';
import type { BusMessage } from '@hopline/bus';
import { codecs } from '@hopline/contracts';
import type { DocumentState } from '@hopline/retrieval';
import { documentLookupEndpoint } from '../src/lookup-endpoint.js';

const key = { tenantId: 'acme', kbId: 'kb', docId: 'atlas' };

/** The lookup's answer where the two indexes hold these states of the document. */
async function lookup(lexical: DocumentState | undefined, vector: DocumentState | undefined) {
  const endpoint = documentLookupEndpoint({
    lexical: { documentState: async () => lexical },
    vector: { documentState: async () => vector },
    progress: { settledUpTo: async () => true, settledThrough: 0 },
  });
  const reply = await endpoint.handle({
    subject: 'lookup',
    data: codecs.documentLookup.encode({ ...key, afterSeq: 0 }),
    headers: {},
  } as unknown as BusMessage);
  return codecs.documentState.decode(reply.data);
}

describe('retrieval-worker - the document lookup a delete asks first', () => {
  it('lookup - a document live on either index exists, at the higher version: a delete one side took and the other did not can be sent again', async () => {
    const live = (version: number): DocumentState => ({ version, deleted: false, chunks: 1 });
    const tombstone = (version: number): DocumentState => ({ version, deleted: true, chunks: 0 });
    expect(await lookup(tombstone(2), live(1))).toMatchObject({ exists: true, version: 2 });
    expect(await lookup(live(3), undefined)).toMatchObject({ exists: true, version: 3 });
    expect(await lookup(tombstone(2), tombstone(2))).toMatchObject({ exists: false, version: 2 });
    expect(await lookup(undefined, undefined)).toMatchObject({ exists: false });
  });
});
