import * as grpc from '@grpc/grpc-js';
import { codecs, loadHoplineGrpc, subjects, type KbList__Output, type Kb__Output } from '@hopline/contracts';
import { createLogger } from '@hopline/telemetry';
import { waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { bearer, startTestGateway, type TestGateway, type TestKey } from './support/harness.js';

/** What the retrieval workers would answer: documents and chunks per "<tenant>/<kb>". */
async function serveKbStats(t: TestGateway, held: Record<string, { documents: number; chunks: number }>) {
  await t.peerBus.serve({
    name: 'retrieval-worker',
    version: '0.1.0',
    endpoints: [
      {
        name: 'kb-stats',
        subject: subjects.kbStats,
        handle: async (message) => {
          const request = codecs.kbStatsRequest.decode(message.data);
          const kbs = request.kbIds.map((kbId) => ({
            kbId,
            ...(held[`${request.tenantId}/${kbId}`] ?? { documents: 0, chunks: 0 }),
          }));
          return { data: codecs.kbStatsResponse.encode({ kbs, workerId: 'w1' }) };
        },
      },
    ],
  });
}

const kbRequest = (t: TestGateway, key: TestKey, method: string, path: string) =>
  fetch(`${t.baseUrl}${path}`, { method, headers: bearer(key) });

describe('answer-gateway knowledge bases over HTTP', () => {
  it('creates, lists with counts and worker lag, reads and deletes a tenant’s kbs', async () => {
    await using t = await startTestGateway();
    const { alice, carol } = t.keys;
    await serveKbStats(t, { [`${alice.tenantId}/handbook`]: { documents: 3, chunks: 12 } });
    t.peerBus.publish(subjects.retrievalPresence, codecs.workerPresence.encode({ workerId: 'w1', ingestLag: 4 }));
    t.peerBus.publish(subjects.retrievalPresence, codecs.workerPresence.encode({ workerId: 'w2', ingestLag: 0 }));

    // handbook exists through its documents; projects only once created.
    const created = await kbRequest(t, alice, 'PUT', '/v1/kbs/projects');
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ kbId: 'projects', documents: 0, chunks: 0 });
    expect((await kbRequest(t, alice, 'PUT', '/v1/kbs/projects')).status).toBe(200);

    await waitFor(
      async () =>
        ((await (await kbRequest(t, alice, 'GET', '/v1/kbs')).json()) as { indexLag: unknown[] }).indexLag.length === 2,
      { description: 'both workers to be heard' },
    );
    const listed = (await (await kbRequest(t, alice, 'GET', '/v1/kbs')).json()) as {
      kbs: Array<Record<string, unknown>>;
      indexLag: unknown[];
    };
    expect(listed.kbs).toEqual([
      { kbId: 'handbook', documents: 3, chunks: 12, createdUnixMs: 0 },
      { kbId: 'projects', documents: 0, chunks: 0, createdUnixMs: expect.any(Number) },
    ]);
    expect(listed.indexLag).toEqual([
      { workerId: 'w1', ingestLag: 4 },
      { workerId: 'w2', ingestLag: 0 },
    ]);
    // A key that only reads learns nothing of the ingest stream, which holds every tenant's writes.
    expect(
      ((await (await kbRequest(t, t.keys.bob, 'GET', '/v1/kbs')).json()) as { indexLag: unknown[] }).indexLag,
    ).toEqual([]);
    // Another tenant's kb of the same name is not theirs: carol has none.
    expect(((await (await kbRequest(t, carol, 'GET', '/v1/kbs')).json()) as { kbs: unknown[] }).kbs).toEqual([]);

    const refused = await kbRequest(t, alice, 'DELETE', '/v1/kbs/handbook');
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ type: 'urn:hopline:problem:conflict' });
    const deleted = await kbRequest(t, alice, 'DELETE', '/v1/kbs/projects');
    expect(deleted.status).toBe(200);
    expect((await kbRequest(t, alice, 'GET', '/v1/kbs/projects')).status).toBe(404);
    expect((await kbRequest(t, alice, 'DELETE', '/v1/kbs/projects')).status).toBe(404);
    expect((await kbRequest(t, alice, 'GET', '/v1/kbs/handbook')).status).toBe(200);
  });

  it('answers 404 for a kb the key may name that does not exist, 403 outside the key or without the right', async () => {
    await using t = await startTestGateway();
    const { bob, carol } = t.keys;
    await serveKbStats(t, {});
    const notFound = await kbRequest(t, carol, 'GET', '/v1/kbs/handbook');
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toMatchObject({ type: 'urn:hopline:problem:not-found' });
    expect((await kbRequest(t, carol, 'DELETE', '/v1/kbs/handbook')).status).toBe(404);
    for (const [method, path] of [
      ['GET', '/v1/kbs/projects'],
      ['PUT', '/v1/kbs/projects'],
      ['DELETE', '/v1/kbs/projects'],
    ] as const) {
      const forbidden = await kbRequest(t, carol, method, path);
      expect(forbidden.status).toBe(403);
      expect(await forbidden.json()).toMatchObject({ type: 'urn:hopline:problem:forbidden' });
    }
    // bob may read handbook but not create kbs.
    expect((await kbRequest(t, bob, 'PUT', '/v1/kbs/handbook')).status).toBe(403);
    expect((await fetch(`${t.baseUrl}/v1/kbs`)).status).toBe(401);
  });

  it('a PUT of a kb that exists through its documents answers 200, and records it, so it outlives them', async () => {
    await using t = await startTestGateway();
    const held = { [`${t.keys.alice.tenantId}/handbook`]: { documents: 3, chunks: 12 } };
    await serveKbStats(t, held);
    expect((await kbRequest(t, t.keys.alice, 'GET', '/v1/kbs/handbook')).status).toBe(200);
    const put = await kbRequest(t, t.keys.alice, 'PUT', '/v1/kbs/handbook');
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ kbId: 'handbook', documents: 3, createdUnixMs: expect.any(Number) });
    held[`${t.keys.alice.tenantId}/handbook`] = { documents: 0, chunks: 0 };
    expect((await kbRequest(t, t.keys.alice, 'GET', '/v1/kbs/handbook')).status).toBe(200);
  });

  it('waits for the index to apply the kbs’ own writes only, not another tenant’s stored after them', async () => {
    await using t = await startTestGateway();
    const { alice, carol } = t.keys;
    const askedAfter: Array<{ subject: string; tenantId: string; afterSeq: number }> = [];
    await t.peerBus.serve({
      name: 'retrieval-worker',
      version: '0.1.0',
      endpoints: [
        {
          name: 'kb-stats',
          subject: subjects.kbStats,
          handle: async (message) => {
            const { tenantId, kbIds, afterSeq } = codecs.kbStatsRequest.decode(message.data);
            askedAfter.push({ subject: subjects.kbStats, tenantId, afterSeq });
            const kbs = kbIds.map((kbId) => ({ kbId, documents: 1, chunks: 1 }));
            return { data: codecs.kbStatsResponse.encode({ kbs, workerId: 'w1' }) };
          },
        },
        {
          name: 'lookup',
          subject: subjects.documentLookup,
          handle: async (message) => {
            const { tenantId, afterSeq } = codecs.documentLookup.decode(message.data);
            askedAfter.push({ subject: subjects.documentLookup, tenantId, afterSeq });
            return { data: codecs.documentState.encode({ exists: false, version: 0 }) };
          },
        },
      ],
    });
    const ingest = await t.peerBus.durableStream();
    const write = (tenantId: string, docId: string) =>
      ingest.publish(
        subjects.ingest(tenantId, 'handbook'),
        codecs.ingestCommand.encode({ delete: { tenantId, kbId: 'handbook', docId, version: 1 } }),
        { msgId: `${tenantId}:${docId}` },
      );
    const alicesWrite = await write(alice.tenantId, 'a');
    // Carol's bulk ingest, stored after alice's write: the index applies it in stream order.
    for (const docId of ['b', 'c', 'd']) await write(carol.tenantId, docId);

    expect((await kbRequest(t, alice, 'GET', '/v1/kbs/handbook')).status).toBe(200);
    expect((await kbRequest(t, alice, 'DELETE', '/v1/kbs/handbook/documents/a')).status).toBe(404);
    expect((await kbRequest(t, carol, 'GET', '/v1/kbs/handbook')).status).toBe(200);
    expect(askedAfter).toEqual([
      { subject: subjects.kbStats, tenantId: alice.tenantId, afterSeq: alicesWrite.seq },
      { subject: subjects.documentLookup, tenantId: alice.tenantId, afterSeq: alicesWrite.seq },
      { subject: subjects.kbStats, tenantId: carol.tenantId, afterSeq: alicesWrite.seq + 3 },
    ]);
  });

  it('answers 503 with Retry-After when no retrieval worker can count the documents, and logs that refusal as a warning, not an error', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger('answer-gateway', {
      level: 'debug',
      destination: { write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    await using t = await startTestGateway({ logger });
    const response = await kbRequest(t, t.keys.alice, 'GET', '/v1/kbs');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(lines.filter((line) => line.route === 'GET /v1/kbs')).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'request refused for now; the client may retry',
        problem: 'unavailable',
        retryAfterSeconds: 1,
      }),
    ]);
  });
});

describe('answer-gateway knowledge bases over gRPC', () => {
  it('KnowledgeBases: the same resource, refusals as NOT_FOUND and PERMISSION_DENIED, ABORTED for a kb still holding documents', async () => {
    await using t = await startTestGateway();
    const { alice, carol } = t.keys;
    await serveKbStats(t, { [`${alice.tenantId}/handbook`]: { documents: 1, chunks: 2 } });
    const { KnowledgeBases } = loadHoplineGrpc().hopline.v1;
    const client = new KnowledgeBases(t.grpcAddress, grpc.credentials.createInsecure());
    const metadataOf = (key: TestKey) => {
      const metadata = new grpc.Metadata();
      metadata.set('authorization', `Bearer ${key.key}`);
      return metadata;
    };
    const call = <T>(method: 'createKb' | 'getKb' | 'deleteKb' | 'listKbs', key: TestKey, request: object) =>
      new Promise<{ value?: T; error?: grpc.ServiceError }>((resolve) => {
        (client[method] as (r: object, m: grpc.Metadata, cb: (e: grpc.ServiceError | null, v?: T) => void) => void)(
          request,
          metadataOf(key),
          (error, value) => resolve(error ? { error } : { ...(value === undefined ? {} : { value }) }),
        );
      });
    try {
      expect((await call<Kb__Output>('createKb', alice, { kbId: 'projects' })).value).toMatchObject({
        kbId: 'projects',
      });
      const list = await call<KbList__Output>('listKbs', alice, {});
      expect(list.value?.kbs.map((kb) => [kb.kbId, kb.documents, kb.chunks])).toEqual([
        ['handbook', 1, 2],
        ['projects', 0, 0],
      ]);
      expect((await call('getKb', carol, { kbId: 'handbook' })).error?.code).toBe(grpc.status.NOT_FOUND);
      expect((await call('getKb', carol, { kbId: 'projects' })).error?.code).toBe(grpc.status.PERMISSION_DENIED);
      const conflict = (await call('deleteKb', alice, { kbId: 'handbook' })).error;
      expect(conflict?.code).toBe(grpc.status.ABORTED);
      expect(conflict?.metadata.get('hopline-error-code')).toEqual(['conflict']);
      expect((await call<Kb__Output>('deleteKb', alice, { kbId: 'projects' })).value?.kbId).toBe('projects');
    } finally {
      client.close();
    }
  });
});
