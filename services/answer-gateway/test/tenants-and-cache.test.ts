import { codecs, encodeOperatorControls, jetstream, subjects } from '@hopline/contracts';
import { waitFor } from '@hopline/test-support';
import { describe, expect, it } from 'vitest';
import { twoHopScript } from './support/fake-reasoner.js';
import {
  askJson,
  bearer,
  metricValue,
  startTestGateway,
  type TestGateway,
  type TestGatewayOptions,
  type TestKey,
} from './support/harness.js';
import { findRedis } from './support/redis.js';

const redis = await findRedis();

interface DoneBody {
  questionId: string;
  answer: string;
  cached: boolean;
  citations: Array<{ docId: string; kbId: string; title: string; snippet: string }>;
}

async function ask(t: TestGateway, key: TestKey, body: Record<string, unknown>): Promise<DoneBody> {
  const response = await askJson(t.baseUrl, key, body);
  expect(response.status).toBe(200);
  return (await response.json()) as DoneBody;
}

const QUESTION = { question: 'Which department does the owner of project Atlas belong to?' };

describe('answer-gateway tenant scope', () => {
  it('sends downstream exactly the key scope: all its kbs by default, the requested subset when narrowed', async () => {
    await using t = await startTestGateway();
    await ask(t, t.keys.alice, QUESTION);
    await ask(t, t.keys.alice, { ...QUESTION, kbIds: ['projects', 'projects'] });
    await ask(t, t.keys.carol, QUESTION);
    expect(t.reasoner.asks.map((command) => command.ctx?.scope)).toEqual([
      { tenantId: t.keys.alice.tenantId, userId: 'alice', kbIds: ['handbook', 'projects'], docIds: [] },
      { tenantId: t.keys.alice.tenantId, userId: 'alice', kbIds: ['projects'], docIds: [] },
      { tenantId: t.keys.carol.tenantId, userId: 'carol', kbIds: ['handbook'], docIds: [] },
    ]);
  });

  it('sends selected documents downstream inside the key scope, and refuses ids no document can have', async () => {
    await using t = await startTestGateway();
    await ask(t, t.keys.alice, { ...QUESTION, kbIds: ['projects'], docIds: ['atlas', 'orion', 'atlas'] });
    // Another tenant's document ids narrow the question to nothing of theirs: the tenant and kbs stay the key's.
    await ask(t, t.keys.carol, { ...QUESTION, docIds: ['atlas'] });
    expect(t.reasoner.asks.map((command) => command.ctx?.scope)).toEqual([
      { tenantId: t.keys.alice.tenantId, userId: 'alice', kbIds: ['projects'], docIds: ['atlas', 'orion'] },
      { tenantId: t.keys.carol.tenantId, userId: 'carol', kbIds: ['handbook'], docIds: ['atlas'] },
    ]);
    for (const docIds of [[], ['..'], ['a/b'], 'atlas', Array.from({ length: 101 }, (_, i) => `d${i}`)]) {
      const refused = await askJson(t.baseUrl, t.keys.alice, { ...QUESTION, docIds });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ type: 'urn:hopline:problem:invalid-request' });
    }
    const outside = await askJson(t.baseUrl, t.keys.carol, { ...QUESTION, kbIds: ['projects'], docIds: ['atlas'] });
    expect(outside.status).toBe(403);
    expect(t.reasoner.asks).toHaveLength(2);
  });

  it('shows a reasoning trace only to the user who asked the question; others get 404 as for an unknown id', async () => {
    await using t = await startTestGateway();
    const questionId = 'a0c1e2d3-0000-4000-8000-000000000001';
    await t.traces.put(
      questionId,
      codecs.reasoningTrace.encode({
        questionId,
        scope: { tenantId: t.keys.alice.tenantId, userId: 'alice', kbIds: ['handbook'] },
        question: 'Who owns Atlas?',
        hops: [{ hop: 1, query: 'Who owns Atlas?', evidenceChunkIds: ['handbook:atlas#0'] }],
        stopReason: 'SUFFICIENT',
      }),
    );
    const traceOf = (key: TestKey, id = questionId) =>
      fetch(`${t.baseUrl}/v1/questions/${id}/trace`, { headers: bearer(key) });

    const own = await traceOf(t.keys.alice);
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({
      questionId,
      stopReason: 'SUFFICIENT',
      hops: [{ evidenceChunkIds: ['handbook:atlas#0'] }],
    });
    for (const other of [t.keys.bob, t.keys.carol]) {
      const response = await traceOf(other);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({
        type: 'urn:hopline:problem:not-found',
        detail: 'no such question',
      });
    }
    expect((await traceOf(t.keys.alice, 'a0c1e2d3-0000-4000-8000-00000000dead')).status).toBe(404);
    expect((await traceOf(t.keys.alice, 'not.a.valid*id')).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/v1/questions/${questionId}/trace`)).status).toBe(401);
  });

  it('refuses ingestion by a key without the right, or into a kb outside its scope', async () => {
    await using t = await startTestGateway();
    const ingest = (key: TestKey, kbId: string) =>
      fetch(`${t.baseUrl}/v1/kbs/${kbId}/documents`, {
        method: 'POST',
        headers: { ...bearer(key), 'Content-Type': 'application/json' },
        body: JSON.stringify({ docId: 'atlas', title: 'Atlas', text: 'Project Atlas is owned by Dana Reyes.' }),
      });
    expect((await ingest(t.keys.bob, 'handbook')).status).toBe(403);
    expect((await ingest(t.keys.carol, 'projects')).status).toBe(403);
    const accepted = await ingest(t.keys.alice, 'projects');
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toMatchObject({ kbId: 'projects', accepted: [{ docId: 'atlas', duplicate: false }] });
  });

  it("never drops one tenant's document as a duplicate of another tenant's with the same id and version", async () => {
    await using t = await startTestGateway();
    const ingest = (key: TestKey, kbId: string) =>
      fetch(`${t.baseUrl}/v1/kbs/${kbId}/documents`, {
        method: 'POST',
        headers: { ...bearer(key), 'Content-Type': 'application/json' },
        body: JSON.stringify({ docId: 'readme', version: 1, title: 'Readme', text: 'Read me first.' }),
      });
    for (const [key, kbId] of [
      [t.keys.alice, 'handbook'],
      [t.keys.carol, 'handbook'],
      [t.keys.alice, 'projects'],
    ] as const) {
      const response = await ingest(key, kbId);
      expect(await response.json()).toMatchObject({ accepted: [{ docId: 'readme', duplicate: false }] });
    }
    expect(await (await ingest(t.keys.carol, 'handbook')).json()).toMatchObject({
      accepted: [{ docId: 'readme', duplicate: true }],
    });
  });
});

const backends = [
  { kind: 'memory', options: {} satisfies TestGatewayOptions, skip: false },
  {
    kind: 'redis',
    options: { config: { REDIS_URL: redis.url } } satisfies TestGatewayOptions,
    skip: redis.url === undefined,
  },
];

for (const backend of backends) {
  describe.skipIf(backend.skip)(`answer-gateway answer cache (${backend.kind})`, () => {
    const start = (options: TestGatewayOptions = {}) =>
      startTestGateway({ ...backend.options, ...options, config: { ...backend.options.config, ...options.config } });

    it('replays a finished answer as done with cached: true without asking the reasoner, whatever the case and spacing of the question', async () => {
      await using t = await start();
      const first = await ask(t, t.keys.alice, QUESTION);
      expect(first.cached).toBe(false);
      const second = await ask(t, t.keys.alice, {
        question: '  which DEPARTMENT does the owner of   project atlas belong to ',
      });
      expect(second).toMatchObject({ cached: true, answer: first.answer, citations: first.citations });
      // Under the id of the question that computed it, whose trace is the answer's.
      expect(second.questionId).toBe(first.questionId);
      expect(t.reasoner.asks).toHaveLength(1);
      expect(await metricValue(t.metrics, 'hopline_cache_lookups_total', { cache: 'answer', result: 'hit' })).toBe(1);

      const sse = await fetch(`${t.baseUrl}/v1/ask`, {
        method: 'POST',
        headers: { ...bearer(t.keys.alice), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify(QUESTION),
      });
      const text = await sse.text();
      expect(text.match(/^event: .*/gm)).toEqual(['event: done']);
      expect(text).toContain('"cached":true');
    });

    it('never serves one tenant’s or user’s cached answer to another, even for the same question and kb name', async () => {
      await using t = await start();
      const alice = await ask(t, t.keys.alice, { ...QUESTION, kbIds: ['handbook'] });
      const carol = await ask(t, t.keys.carol, QUESTION);
      const bob = await ask(t, t.keys.bob, QUESTION);
      expect([alice.cached, carol.cached, bob.cached]).toEqual([false, false, false]);
      expect(carol.citations.every((citation) => citation.docId.startsWith(t.keys.carol.tenantId))).toBe(true);
      expect(JSON.stringify(carol)).not.toContain(t.keys.alice.tenantId);
      expect(t.reasoner.asks).toHaveLength(3);

      const carolAgain = await ask(t, t.keys.carol, QUESTION);
      expect(carolAgain.cached).toBe(true);
      expect(JSON.stringify(carolAgain)).not.toContain(t.keys.alice.tenantId);
    });

    it('keys entries by kb scope, selected documents and hop budget as well', async () => {
      await using t = await start();
      await ask(t, t.keys.alice, QUESTION);
      expect((await ask(t, t.keys.alice, { ...QUESTION, kbIds: ['projects'] })).cached).toBe(false);
      expect((await ask(t, t.keys.alice, { ...QUESTION, maxHops: 5 })).cached).toBe(false);
      expect((await ask(t, t.keys.alice, { ...QUESTION, kbIds: ['projects', 'handbook'] })).cached).toBe(true);
      expect((await ask(t, t.keys.alice, { ...QUESTION, docIds: ['atlas'] })).cached).toBe(false);
      expect((await ask(t, t.keys.alice, { ...QUESTION, docIds: ['atlas', 'atlas'] })).cached).toBe(true);
    });

    it('keys entries by the operators’ controls the gateway sees in their bucket: an answer from before a change is not served under it, and is again once the change is undone', async () => {
      await using t = await start();
      const controls = await t.peerBus.keyValue({ bucket: jetstream.controlsBucket, retention: 'keep' });
      const before = await ask(t, t.keys.alice, QUESTION);
      expect((await ask(t, t.keys.alice, QUESTION)).cached).toBe(true);
      // Answers from here on read differently, so that which entry answers shows.
      t.reasoner.script = twoHopScript({ done: { answer: 'Dana Reyes [1], answered single-shot.' } });
      await controls.put(jetstream.controlsKey, encodeOperatorControls({ multiHop: false, hopCap: 5 }));
      // The gateway hears the change through its watch: until then the entry from before still answers.
      await waitFor(async () => !(await ask(t, t.keys.alice, QUESTION)).cached, {
        description: 'an ask under multi-hop off to miss the cache',
      });
      expect(await ask(t, t.keys.alice, QUESTION)).toMatchObject({
        cached: true,
        answer: 'Dana Reyes [1], answered single-shot.',
      });
      await controls.put(jetstream.controlsKey, encodeOperatorControls({ multiHop: true, hopCap: 5 }));
      const again = await waitFor(
        async () => {
          const done = await ask(t, t.keys.alice, QUESTION);
          return done.cached && done.answer === before.answer && done;
        },
        { description: 'the answer from before the change to be served again' },
      );
      expect(again.questionId).toBe(before.questionId);
    });

    it('a kb change announced by the retrieval-worker makes earlier answers stale; another tenant’s change of a kb with the same name does not', async () => {
      await using t = await start();
      await ask(t, t.keys.alice, QUESTION);
      await ask(t, t.keys.carol, QUESTION);
      const announce = (key: TestKey, kbId: string) =>
        t.peerBus.publish(
          subjects.kbChanged(key.tenantId, kbId),
          codecs.kbChanged.encode({ tenantId: key.tenantId, kbId, docId: 'atlas', docVersion: 2 }),
        );

      announce(t.keys.carol, 'handbook');
      await waitFor(async () => !(await ask(t, t.keys.carol, QUESTION)).cached, {
        description: "carol's answer to go stale",
      });
      expect((await ask(t, t.keys.alice, QUESTION)).cached).toBe(true);

      announce(t.keys.alice, 'projects');
      await waitFor(async () => !(await ask(t, t.keys.alice, QUESTION)).cached, {
        description: "alice's answer to go stale",
      });
      expect((await ask(t, t.keys.alice, QUESTION)).cached).toBe(true);
    });

    it('ingesting through the gateway makes the kb’s cached answers stale at once', async () => {
      await using t = await start();
      await ask(t, t.keys.alice, QUESTION);
      const ingested = await fetch(`${t.baseUrl}/v1/kbs/handbook/documents`, {
        method: 'POST',
        headers: { ...bearer(t.keys.alice), 'Content-Type': 'application/json' },
        body: JSON.stringify({ docId: 'atlas', title: 'Atlas', text: 'Project Atlas is now owned by Lee Park.' }),
      });
      expect(ingested.status).toBe(202);
      expect((await ask(t, t.keys.alice, QUESTION)).cached).toBe(false);
      // What a retrieval worker answers once it indexed the document.
      await t.peerBus.serve({
        name: 'retrieval-worker',
        version: '0.1.0',
        endpoints: [
          {
            name: 'document-lookup',
            subject: subjects.documentLookup,
            handle: async () => ({ data: codecs.documentState.encode({ exists: true, version: 1 }) }),
          },
        ],
      });
      const deleted = await fetch(`${t.baseUrl}/v1/kbs/handbook/documents/atlas`, {
        method: 'DELETE',
        headers: bearer(t.keys.alice),
      });
      expect(deleted.status).toBe(202);
      expect((await ask(t, t.keys.alice, QUESTION)).cached).toBe(false);
    });

    it('does not cache degraded answers or answers cut short', async () => {
      await using t = await start({
        script: twoHopScript({ done: { degraded: true, degradedReasons: ['vector search down'] } }),
      });
      await ask(t, t.keys.alice, QUESTION);
      expect((await ask(t, t.keys.alice, QUESTION)).cached).toBe(false);
      t.reasoner.script = twoHopScript({ done: { stopReason: 'DEADLINE' } });
      for (let i = 0; i < 2; i += 1) {
        const cut = await askJson(t.baseUrl, t.keys.alice, { question: 'Who owns Atlas?' });
        expect(cut.status).toBe(504);
        expect(((await cut.json()) as { done: DoneBody }).done.cached).toBe(false);
      }
      expect(t.reasoner.asks).toHaveLength(4);
    });

    it('answers a JSON ask whose answer broke off with a problem that holds the partial done, never a plain 200', async () => {
      await using t = await start({
        script: twoHopScript({
          done: { stopReason: 'INCOMPLETE', degraded: true, degradedReasons: ['the answer was cut'] },
        }),
      });
      const response = await askJson(t.baseUrl, t.keys.alice, QUESTION);
      expect(response.status).toBe(502);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      const body = (await response.json()) as { type: string; done: DoneBody & { stopReason: string } };
      expect(body.type).toBe('urn:hopline:problem:answer-incomplete');
      expect(body.done).toMatchObject({ stopReason: 'INCOMPLETE', degraded: true });
      expect((await askJson(t.baseUrl, t.keys.alice, QUESTION)).status).toBe(502);
      expect(t.reasoner.asks).toHaveLength(2);
    });
  });
}
