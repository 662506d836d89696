import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CancelledError,
  codecs,
  ConflictError,
  DeadlineExceededError,
  headers as headerNames,
  NoRespondersError,
  RemoteError,
  UnavailableError,
  ValidationError,
} from '@hopline/contracts';
import { waitFor } from '@hopline/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import type {
  Bus,
  BusErrorReporter,
  BusMessage,
  DurableConsumerOptions,
  DurableStreamOptions,
  Endpoint,
  Settlement,
  StoredMessage,
  StreamMessage,
} from '../src/index.js';

const text = (value: string) => new TextEncoder().encode(value);
const read = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const VERSION = '1.0.0';
// NATS's default max_payload is 1 MiB; both adapters must refuse more.
const OVERSIZED = new Uint8Array(1024 * 1024 + 1);

/** Every test gets subjects and names of its own, so that runs sharing one server never meet. */
function unique() {
  const id = randomUUID().replaceAll('-', '').slice(0, 12);
  return { subject: (suffix = 'x') => `test.${id}.${suffix}`, name: (what: string) => `${what}-${id}`, id };
}

function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

function endpoint(subject: string, handle: Endpoint['handle'], name = 'main'): Endpoint {
  return { name, subject, handle };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

export type ConnectBus = (options: { onError?: BusErrorReporter }) => Promise<Bus>;

/**
 * The one behaviour suite of the bus port. `connect` opens a new connection to the same
 * server (or broker) as every other connection of the test file.
 */
export function busScenarios(adapter: string, connect: ConnectBus): void {
  describe(`bus scenarios (${adapter})`, () => {
    let opened: Bus[] = [];
    const bus = async (onError?: BusErrorReporter) => {
      const connection = await connect({ onError });
      opened.push(connection);
      return connection;
    };
    afterEach(async () => {
      await Promise.allSettled(opened.map((connection) => connection.drain()));
      opened = [];
    });

    describe('request/reply', () => {
      it('request/reply - a protobuf request reaches the endpoint and its reply comes back decoded', async () => {
        const t = unique();
        const [responder, requester] = [await bus(), await bus()];
        await responder.serve({
          name: t.name('retrieve'),
          version: VERSION,
          endpoints: [
            endpoint(t.subject(), async (request) => {
              const query = codecs.retrieveRequest.decode(request.data).query;
              return {
                data: codecs.retrieveResponse.encode({
                  chunks: [{ chunkId: 'c1', text: `answer to ${query}` }],
                  workerId: 'w1',
                }),
              };
            }),
          ],
        });
        const reply = await requester.request(t.subject(), codecs.retrieveRequest.encode({ query: 'who?', topK: 3 }), {
          timeoutMs: 2_000,
        });
        const response = codecs.retrieveResponse.decode(reply.data);
        expect(response.chunks[0]?.text).toBe('answer to who?');
        expect(response.workerId).toBe('w1');
      });

      it('headers - request and reply headers round-trip, names as sent and values trimmed as NATS does', async () => {
        const t = unique();
        const [responder, requester] = [await bus(), await bus()];
        let seen: BusMessage['headers'] = {};
        await responder.serve({
          name: t.name('echo'),
          version: VERSION,
          endpoints: [
            endpoint(t.subject(), async (request) => {
              seen = request.headers;
              return { data: text('ok'), headers: { 'Reply-Header': 'from responder' } };
            }),
          ],
        });
        const reply = await requester.request(t.subject(), text('hi'), {
          timeoutMs: 2_000,
          headers: { 'X-Question-Id': 'q-1', traceparent: '  padded  ' },
        });
        expect(seen).toMatchObject({ 'X-Question-Id': 'q-1', traceparent: 'padded' });
        expect(reply.headers).toEqual({ 'Reply-Header': 'from responder' });
      });

      it('headers - a header name or value NATS cannot carry is refused before sending', async () => {
        const t = unique();
        const requester = await bus();
        const badName = await rejection(
          requester.request(t.subject(), text(''), { timeoutMs: 1_000, headers: { 'bad name': 'x' } }),
        );
        expect(badName).toBeInstanceOf(ValidationError);
        expect(() =>
          requester.publish(t.subject(), text(''), { headers: { 'X-Injected': 'a\r\nX-Other: b' } }),
        ).toThrow(ValidationError);
      });

      it('request/reply - receivers get their own copy of the payload', async () => {
        const t = unique();
        const [responder, requester] = [await bus(), await bus()];
        await responder.serve({
          name: t.name('mutate'),
          version: VERSION,
          endpoints: [
            endpoint(t.subject(), async (request) => {
              request.data.fill(0);
              return { data: request.data };
            }),
          ],
        });
        const sent = text('keep me');
        const reply = await requester.request(t.subject(), sent, { timeoutMs: 2_000 });
        expect(read(sent)).toBe('keep me');
        expect([...reply.data].every((byte) => byte === 0)).toBe(true);
      });

      it('queue group - replicas of one service split the requests between them', async () => {
        const t = unique();
        const [first, second, requester] = [await bus(), await bus(), await bus()];
        for (const [replica, id] of [
          [first, 'first'],
          [second, 'second'],
        ] as const) {
          await replica.serve({
            name: t.name('worker'),
            version: VERSION,
            endpoints: [endpoint(t.subject(), async () => ({ data: text(id) }))],
          });
        }
        const answeredBy = new Set<string>();
        for (let i = 0; i < 30; i++)
          answeredBy.add(read((await requester.request(t.subject(), text(''), { timeoutMs: 2_000 })).data));
        expect(answeredBy).toEqual(new Set(['first', 'second']));
      });

      it('no responders - a request nobody listens to fails at once with NoRespondersError', async () => {
        const t = unique();
        const requester = await bus();
        const error = await rejection(requester.request(t.subject(), text(''), { timeoutMs: 10_000 }));
        expect(error).toBeInstanceOf(NoRespondersError);
      });

      it('timeout - a responder slower than the timeout gives DeadlineExceededError', async () => {
        const t = unique();
        const [responder, requester] = [await bus(), await bus()];
        const slow = gate();
        await responder.serve({
          name: t.name('slow'),
          version: VERSION,
          endpoints: [
            endpoint(t.subject(), async () => {
              await slow.opened;
              return { data: text('late') };
            }),
          ],
        });
        const error = await rejection(requester.request(t.subject(), text(''), { timeoutMs: 100 }));
        slow.open();
        expect(error).toBeInstanceOf(DeadlineExceededError);
      });

      it('timeout - a deadline that already passed fails without sending', async () => {
        const t = unique();
        const requester = await bus();
        await expect(requester.request(t.subject(), text(''), { timeoutMs: 0 })).rejects.toBeInstanceOf(
          DeadlineExceededError,
        );
      });

      it('timeout - a timeout that is not a finite number of milliseconds is refused', async () => {
        const t = unique();
        const requester = await bus();
        await expect(
          requester.request(t.subject(), text(''), { timeoutMs: Number.POSITIVE_INFINITY }),
        ).rejects.toBeInstanceOf(ValidationError);
        await expect(requester.request(t.subject(), text(''), { timeoutMs: Number.NaN })).rejects.toBeInstanceOf(
          ValidationError,
        );
      });

      it('abort - aborting the signal rejects the waiting request at once with CancelledError', async () => {
        const t = unique();
        const [responder, requester] = [await bus(), await bus()];
        const slow = gate();
        let started = false;
        await responder.serve({
          name: t.name('abortable'),
          version: VERSION,
          endpoints: [
            endpoint(t.subject(), async () => {
              started = true;
              await slow.opened;
              return { data: text('late') };
            }),
          ],
        });
        const controller = new AbortController();
        const pending = requester.request(t.subject(), text(''), { timeoutMs: 10_000, signal: controller.signal });
        await waitFor(() => started);
        controller.abort();
        const error = await rejection(pending);
        slow.open();
        expect(error).toBeInstanceOf(CancelledError);
      });

      it('abort - an already aborted signal fails without sending', async () => {
        const t = unique();
        const requester = await bus();
        await expect(
          requester.request(t.subject(), text(''), { timeoutMs: 1_000, signal: AbortSignal.abort() }),
        ).rejects.toBeInstanceOf(CancelledError);
      });

      it('error envelope - a Hopline error thrown by the handler arrives as a RemoteError with its code and message', async () => {
        const t = unique();
        const [responder, requester] = [await bus(), await bus()];
        await responder.serve({
          name: t.name('strict'),
          version: VERSION,
          endpoints: [
            endpoint(t.subject(), async () => {
              throw new ValidationError('topK must be positive');
            }),
          ],
        });
        const error = await rejection(requester.request(t.subject(), text(''), { timeoutMs: 2_000 }));
        expect(error).toBeInstanceOf(RemoteError);
        expect(error).toMatchObject({ code: 'invalid_argument', message: 'topK must be positive', remote: true });
      });

      it('error envelope - an unknown error becomes internal, its message kept on one line', async () => {
        const t = unique();
        const [responder, requester] = [await bus(), await bus()];
        await responder.serve({
          name: t.name('buggy'),
          version: VERSION,
          endpoints: [
            endpoint(t.subject(), async () => {
              throw new TypeError('cannot read x\nof undefined');
            }),
          ],
        });
        const error = await rejection(requester.request(t.subject(), text(''), { timeoutMs: 2_000 }));
        expect(error).toBeInstanceOf(RemoteError);
        expect(error).toMatchObject({ code: 'internal', message: 'cannot read x of undefined' });
      });

      it('error envelope - a reply the server refuses ends the request with a RemoteError, not a timeout', async () => {
        const t = unique();
        const reported: string[] = [];
        const [responder, requester] = [
          await bus((error, where) => reported.push(`${where.operation}: ${String(error)}`)),
          await bus(),
        ];
        await responder.serve({
          name: t.name('huge'),
          version: VERSION,
          endpoints: [endpoint(t.subject(), async () => ({ data: OVERSIZED }))],
        });
        const error = await rejection(requester.request(t.subject(), text(''), { timeoutMs: 10_000 }));
        expect(error).toBeInstanceOf(RemoteError);
        expect(error).toMatchObject({ code: 'internal' });
        expect(reported).toEqual([expect.stringMatching(/^reply: .*max payload/)]);
      });

      it('error envelope - an envelope with a code outside the taxonomy becomes internal and names the code', async () => {
        const t = unique();
        const [responder, requester] = [await bus(), await bus()];
        await responder.serve({
          name: t.name('foreign'),
          version: VERSION,
          endpoints: [
            endpoint(t.subject(), async () => ({
              data: new Uint8Array(0),
              headers: { [headerNames.errorCode]: 'teapot', [headerNames.errorMessage]: 'short and stout' },
            })),
          ],
        });
        const error = await rejection(requester.request(t.subject(), text(''), { timeoutMs: 2_000 }));
        expect(error).toMatchObject({ code: 'internal', message: 'short and stout (unknown error code "teapot")' });
      });
    });

    describe('publish/subscribe', () => {
      it('fan-out - every plain subscriber gets every message, wildcards included, in order', async () => {
        const t = unique();
        const [publisher, listener, other] = [await bus(), await bus(), await bus()];
        const exact: string[] = [];
        const wildcard: string[] = [];
        listener.subscribe(t.subject('events.q1'), {}, (message) => {
          exact.push(read(message.data));
        });
        other.subscribe(t.subject('events.*'), {}, (message) => {
          wildcard.push(`${message.subject.split('.').pop() ?? ''}:${read(message.data)}`);
        });
        await Promise.all([listener.flush(), other.flush()]);
        for (let i = 0; i < 5; i++) publisher.publish(t.subject('events.q1'), text(String(i)));
        publisher.publish(t.subject('events.q2'), text('other question'));
        await waitFor(() => exact.length === 5 && wildcard.length === 6);
        expect(exact).toEqual(['0', '1', '2', '3', '4']);
        expect(wildcard).toContain('q2:other question');
      });

      it('queue group - subscribers in one queue share the messages while a plain subscriber sees all', async () => {
        const t = unique();
        const [publisher, a, b, watcher] = [await bus(), await bus(), await bus(), await bus()];
        const counts = { a: 0, b: 0, watcher: 0 };
        a.subscribe(t.subject(), { queue: 'workers' }, () => void counts.a++);
        b.subscribe(t.subject(), { queue: 'workers' }, () => void counts.b++);
        watcher.subscribe(t.subject(), {}, () => void counts.watcher++);
        await Promise.all([a.flush(), b.flush(), watcher.flush()]);
        for (let i = 0; i < 30; i++) publisher.publish(t.subject(), text(String(i)));
        await waitFor(() => counts.watcher === 30 && counts.a + counts.b === 30);
        expect(counts.a).toBeGreaterThan(0);
        expect(counts.b).toBeGreaterThan(0);
      });

      it('subscribe - a handler that throws is reported and the subscription keeps delivering', async () => {
        const t = unique();
        const reported: unknown[] = [];
        const [publisher, listener] = [await bus(), await bus((error) => reported.push(error))];
        const received: string[] = [];
        listener.subscribe(t.subject(), {}, (message) => {
          received.push(read(message.data));
          if (read(message.data) === 'bad') throw new Error('handler bug');
        });
        await listener.flush();
        publisher.publish(t.subject(), text('bad'));
        publisher.publish(t.subject(), text('good'));
        await waitFor(() => received.includes('good'));
        expect(reported).toEqual([new Error('handler bug')]);
      });

      it('unsubscribe - no message is delivered after unsubscribe', async () => {
        const t = unique();
        const [publisher, listener] = [await bus(), await bus()];
        const received: string[] = [];
        const subscription = listener.subscribe(t.subject(), {}, (message) => void received.push(read(message.data)));
        const fence: string[] = [];
        listener.subscribe(t.subject('fence'), {}, (message) => void fence.push(read(message.data)));
        await listener.flush();
        publisher.publish(t.subject(), text('before'));
        await waitFor(() => received.length === 1);
        subscription.unsubscribe();
        await listener.flush();
        publisher.publish(t.subject(), text('after'));
        publisher.publish(t.subject('fence'), text('done'));
        await waitFor(() => fence.length === 1);
        expect(received).toEqual(['before']);
      });

      it('validation - malformed subjects and wildcard publishes are refused', async () => {
        const connection = await bus();
        expect(() => connection.publish('test..double-dot', text(''))).toThrow(ValidationError);
        expect(() => connection.publish('test.has space', text(''))).toThrow(ValidationError);
        expect(() => connection.publish('test.*', text(''))).toThrow(ValidationError);
        expect(() => connection.subscribe('test.>.x', {}, () => {})).toThrow(ValidationError);
      });

      it('max payload - a message over the server limit is refused at publish', async () => {
        const t = unique();
        const connection = await bus();
        expect(() => connection.publish(t.subject(), OVERSIZED)).toThrow(ValidationError);
      });
    });

    describe('lifecycle', () => {
      it('drain - stops taking requests, lets the handler in flight reply, then closes', async () => {
        const t = unique();
        const [responder, requester] = [await bus(), await bus()];
        const slow = gate();
        const events: string[] = [];
        let started = 0;
        await responder.serve({
          name: t.name('draining'),
          version: VERSION,
          endpoints: [
            endpoint(t.subject(), async () => {
              started++;
              await slow.opened;
              events.push('handler finished');
              return { data: text('done') };
            }),
          ],
        });
        const reply = requester.request(t.subject(), text(''), { timeoutMs: 10_000 });
        await waitFor(() => started === 1);
        const drained = responder.drain().then(() => events.push('drained'));
        // New requests stop reaching the draining service (requests that raced the drain time out).
        await waitFor(
          async () =>
            (await rejection(requester.request(t.subject(), text(''), { timeoutMs: 200 }))) instanceof
            NoRespondersError,
          { timeoutMs: 5_000 },
        );
        expect(events).toEqual([]);
        slow.open();
        expect(read((await reply).data)).toBe('done');
        await drained;
        // Requests that raced the drain were taken too; all of them finished before the drain did.
        expect(events.at(-1)).toBe('drained');
        expect(events.slice(0, -1)).toContain('handler finished');
        expect(events.slice(0, -1).every((event) => event === 'handler finished')).toBe(true);
        expect(() => responder.publish(t.subject(), text(''))).toThrow(UnavailableError);
        await expect(responder.request(t.subject(), text(''), { timeoutMs: 1_000 })).rejects.toBeInstanceOf(
          UnavailableError,
        );
      });

      it('drain - a subscription drain waits for its running handler', async () => {
        const t = unique();
        const [publisher, listener] = [await bus(), await bus()];
        const slow = gate();
        const events: string[] = [];
        const subscription = listener.subscribe(t.subject(), {}, async () => {
          events.push('started');
          await slow.opened;
          events.push('finished');
        });
        await listener.flush();
        publisher.publish(t.subject(), text(''));
        await waitFor(() => events.length === 1);
        const drained = subscription.drain().then(() => events.push('drained'));
        slow.open();
        await drained;
        expect(events).toEqual(['started', 'finished', 'drained']);
      });

      it('discovery - a service answers $SRV.PING, $SRV.INFO and $SRV.STATS like a NATS micro-service', async () => {
        const t = unique();
        const [responder, requester] = [await bus(), await bus()];
        const name = t.name('discoverable');
        const service = await responder.serve({
          name,
          version: '2.1.0',
          description: 'answers questions',
          endpoints: [endpoint(t.subject(), async () => ({ data: text('pong') }), 'ask')],
        });
        await requester.request(t.subject(), text(''), { timeoutMs: 2_000 });
        const ask = async (subject: string) =>
          JSON.parse(read((await requester.request(subject, new Uint8Array(0), { timeoutMs: 2_000 })).data)) as Record<
            string,
            unknown
          >;

        expect(await ask(`$SRV.PING.${name}`)).toMatchObject({
          type: 'io.nats.micro.v1.ping_response',
          name,
          id: service.id,
          version: '2.1.0',
        });
        expect(await ask(`$SRV.PING.${name}.${service.id}`)).toMatchObject({ id: service.id });
        expect(await ask(`$SRV.INFO.${name}`)).toMatchObject({
          type: 'io.nats.micro.v1.info_response',
          description: 'answers questions',
          endpoints: [{ name: 'ask', subject: t.subject(), queue_group: name }],
        });
        const stats = await ask(`$SRV.STATS.${name}`);
        expect(stats).toMatchObject({ type: 'io.nats.micro.v1.stats_response', name });
        expect((stats.endpoints as Array<{ num_requests: number }>)[0]?.num_requests).toBe(1);
      });

      it('service - an invalid name or version is refused before anything is registered', async () => {
        const t = unique();
        const connection = await bus();
        await expect(connection.serve({ name: 'has space', version: VERSION, endpoints: [] })).rejects.toBeInstanceOf(
          ValidationError,
        );
        await expect(
          connection.serve({ name: t.name('svc'), version: 'latest', endpoints: [] }),
        ).rejects.toBeInstanceOf(ValidationError);
      });

      it('service - stop() removes the endpoints, so later requests find no responders', async () => {
        const t = unique();
        const [responder, requester] = [await bus(), await bus()];
        const service = await responder.serve({
          name: t.name('stoppable'),
          version: VERSION,
          endpoints: [endpoint(t.subject(), async () => ({ data: text('') }))],
        });
        await requester.request(t.subject(), text(''), { timeoutMs: 2_000 });
        await service.stop();
        await responder.flush();
        await expect(requester.request(t.subject(), text(''), { timeoutMs: 2_000 })).rejects.toBeInstanceOf(
          NoRespondersError,
        );
      });
    });

    describe('durable stream', () => {
      const streamFor = (t: ReturnType<typeof unique>) => ({
        name: `TEST_${t.id}`,
        subjects: [`test.${t.id}.kb.*.*.ingest`],
        duplicateWindowMs: 60_000,
      });
      const consumerFor = (
        t: ReturnType<typeof unique>,
        overrides: { maxDeliver?: number; ackWaitMs?: number } = {},
      ) => ({
        durable: t.name('indexer'),
        filterSubject: `test.${t.id}.kb.*.*.ingest`,
        maxDeliver: overrides.maxDeliver ?? 5,
        ackWaitMs: overrides.ackWaitMs ?? 30_000,
      });

      it('durable - a second publish with the same msgId is a duplicate and is delivered once', async () => {
        const t = unique();
        const connection = await bus();
        const stream = await connection.durableStream(streamFor(t));
        const subject = `test.${t.id}.kb.tenant1.kb1.ingest`;
        const first = await stream.publish(subject, text('doc-1 v1'), { msgId: 'doc-1:1' });
        const again = await stream.publish(subject, text('doc-1 v1'), { msgId: 'doc-1:1' });
        const next = await stream.publish(subject, text('doc-2 v1'), { msgId: 'doc-2:1' });
        expect(first.duplicate).toBe(false);
        expect(again).toEqual({ duplicate: true, seq: first.seq });
        expect(next.seq).toBe(first.seq + 1);

        const received: StreamMessage[] = [];
        await stream.consume(consumerFor(t), async (message) => {
          received.push(message);
          return { kind: 'ack' };
        });
        await waitFor(() => received.length === 2);
        expect(received.map((message) => read(message.data))).toEqual(['doc-1 v1', 'doc-2 v1']);
        expect(received[0]?.headers[headerNames.msgId]).toBe('doc-1:1');
        expect(received[0]?.deliveryCount).toBe(1);
      });

      it('durable - retry redelivers after the delay with a growing delivery count', async () => {
        const t = unique();
        const connection = await bus();
        const stream = await connection.durableStream(streamFor(t));
        await stream.publish(`test.${t.id}.kb.t.k.ingest`, text('flaky'), { msgId: 'flaky:1' });
        const counts: number[] = [];
        await stream.consume(consumerFor(t), async (message): Promise<Settlement> => {
          counts.push(message.deliveryCount);
          return message.deliveryCount < 3 ? { kind: 'retry', delayMs: 20 } : { kind: 'ack' };
        });
        await waitFor(() => counts.length === 3);
        expect(counts).toEqual([1, 2, 3]);
      });

      it('durable - a terminated message is never redelivered, a thrown one comes back after the ack wait', async () => {
        const t = unique();
        const connection = await bus();
        const stream = await connection.durableStream(streamFor(t));
        await stream.publish(`test.${t.id}.kb.t.k.ingest`, text('poison'), { msgId: 'poison:1' });
        await stream.publish(`test.${t.id}.kb.t.k.ingest`, text('crashes once'), { msgId: 'crash:1' });
        const deliveries: string[] = [];
        const reported: unknown[] = [];
        await stream.consume(
          consumerFor(t, { ackWaitMs: 300 }),
          async (message): Promise<Settlement> => {
            const body = read(message.data);
            deliveries.push(`${body}#${message.deliveryCount}`);
            if (body === 'poison') return { kind: 'terminate', reason: 'cannot parse' };
            if (message.deliveryCount === 1) throw new Error('worker crashed');
            return { kind: 'ack' };
          },
          (error) => reported.push(error),
        );
        // Redeliveries come in stream order, so a redelivered poison message would arrive first.
        await waitFor(() => deliveries.includes('crashes once#2'), { timeoutMs: 10_000 });
        expect(deliveries).toEqual(['poison#1', 'crashes once#1', 'crashes once#2']);
        expect(reported).toEqual([new Error('worker crashed')]);
      });

      it('durable - after maxDeliver deliveries the stream stops redelivering', async () => {
        const t = unique();
        const connection = await bus();
        const stream = await connection.durableStream(streamFor(t));
        await stream.publish(`test.${t.id}.kb.t.k.ingest`, text('always fails'), { msgId: 'fails:1' });
        const deliveries: string[] = [];
        await stream.consume(consumerFor(t, { maxDeliver: 3 }), async (message): Promise<Settlement> => {
          deliveries.push(`${read(message.data)}#${message.deliveryCount}`);
          return read(message.data) === 'fence' ? { kind: 'ack' } : { kind: 'retry', delayMs: 0 };
        });
        await waitFor(() => deliveries.length === 3);
        // Redeliveries go before new messages: a fourth delivery would come before the fence.
        await stream.publish(`test.${t.id}.kb.t.k.ingest`, text('fence'), { msgId: 'fence:1' });
        await waitFor(() => deliveries.includes('fence#1'));
        expect(deliveries).toEqual(['always fails#1', 'always fails#2', 'always fails#3', 'fence#1']);
      });

      // A stopped JetStream consumer may leave a pull request behind that swallows the next
      // message until its ack wait ends: the short ack wait bounds that in this test.
      it('durable - a restarted consumer with the same durable name resumes after what was acked', async () => {
        const t = unique();
        const [producer, worker] = [await bus(), await bus()];
        const stream = await producer.durableStream(streamFor(t));
        const subject = `test.${t.id}.kb.t.k.ingest`;
        await stream.publish(subject, text('one'), { msgId: 'one' });
        const firstRun: string[] = [];
        const workerStream = await worker.durableStream(streamFor(t));
        const consumer = await workerStream.consume(consumerFor(t, { ackWaitMs: 300 }), async (message) => {
          firstRun.push(read(message.data));
          return { kind: 'ack' };
        });
        await waitFor(() => firstRun.length === 1);
        await consumer.stop();
        await stream.publish(subject, text('two'), { msgId: 'two' });
        const secondRun: string[] = [];
        await workerStream.consume(consumerFor(t, { ackWaitMs: 300 }), async (message) => {
          secondRun.push(read(message.data));
          return { kind: 'ack' };
        });
        await waitFor(() => secondRun.length === 1);
        expect(secondRun).toEqual(['two']);
      });

      it('durable - a consumer started from the start reads the stream from its first message, whatever its durable had settled', async () => {
        const t = unique();
        const [producer, worker] = [await bus(), await bus()];
        const stream = await producer.durableStream(streamFor(t));
        const subject = `test.${t.id}.kb.t.k.ingest`;
        for (const id of ['one', 'two']) await stream.publish(subject, text(id), { msgId: id });
        const firstRun: string[] = [];
        const workerStream = await worker.durableStream(streamFor(t));
        const consumer = await workerStream.consume(consumerFor(t, { ackWaitMs: 300 }), async (message) => {
          firstRun.push(read(message.data));
          return { kind: 'ack' };
        });
        await waitFor(async () => (await consumer.progress()).settledThrough === 2);
        await consumer.stop();
        await stream.publish(subject, text('three'), { msgId: 'three' });
        const secondRun: StreamMessage[] = [];
        const again = await workerStream.consume(
          { ...consumerFor(t, { ackWaitMs: 300 }), fromStart: true },
          async (message) => {
            secondRun.push(message);
            return { kind: 'ack' };
          },
        );
        await waitFor(async () => (await again.progress()).settledThrough === 3);
        expect(firstRun).toEqual(['one', 'two']);
        expect(secondRun.map((message) => read(message.data))).toEqual(['one', 'two', 'three']);
        expect(secondRun.map((message) => message.deliveryCount)).toEqual([1, 1, 1]);
        expect((await again.progress()).lag).toBe(0);
      });

      it('durable - a consumer without its own reporter reports a throwing handler to the bus reporter', async () => {
        const t = unique();
        const reported: Array<{ operation: string; subject: string }> = [];
        const connection = await bus((_error, where) => reported.push(where));
        const stream = await connection.durableStream(streamFor(t));
        await stream.publish(`test.${t.id}.kb.t.k.ingest`, text('boom'), { msgId: 'boom:1' });
        await stream.consume(consumerFor(t), async () => {
          throw new Error('indexer bug');
        });
        await waitFor(() => reported.length === 1);
        expect(reported[0]).toEqual({ operation: 'consume', subject: `test.${t.id}.kb.t.k.ingest` });
      });

      it('durable - progress says how far the consumer has settled the stream and how much is left', async () => {
        const t = unique();
        const connection = await bus();
        const stream = await connection.durableStream(streamFor(t));
        const subject = `test.${t.id}.kb.t.k.ingest`;
        expect(await stream.lastSequence()).toBe(0);
        for (const id of ['a', 'b', 'c']) await stream.publish(subject, text(id), { msgId: id });
        expect(await stream.lastSequence()).toBe(3);
        const held = gate();
        const consumer = await stream.consume(consumerFor(t), async (message) => {
          if (read(message.data) === 'c') await held.opened;
          return { kind: 'ack' };
        });
        await waitFor(async () => (await consumer.progress()).settledThrough === 2);
        expect((await consumer.progress()).lag).toBe(1);
        held.open();
        await waitFor(async () => (await consumer.progress()).settledThrough === 3);
        expect((await consumer.progress()).lag).toBe(0);
      });

      it('durable - publishing to a subject outside the stream fails with NoRespondersError', async () => {
        const t = unique();
        const connection = await bus();
        const stream = await connection.durableStream(streamFor(t));
        await expect(stream.publish(`test.${t.id}.elsewhere`, text(''), { msgId: 'x' })).rejects.toBeInstanceOf(
          NoRespondersError,
        );
      });
    });

    describe('question streams', () => {
      const eventsFor = (t: ReturnType<typeof unique>, options: Partial<DurableStreamOptions> = {}) => ({
        name: `EVENTS_${t.id}`,
        subjects: [`test.${t.id}.*.events`],
        ...options,
      });
      const jobsFor = (t: ReturnType<typeof unique>) => ({
        name: `JOBS_${t.id}`,
        subjects: [`test.${t.id}.*.ask`],
        workQueue: true,
      });
      const jobConsumer = (t: ReturnType<typeof unique>, overrides: Partial<DurableConsumerOptions> = {}) => ({
        durable: t.name('reasoner'),
        filterSubject: `test.${t.id}.*.ask`,
        maxDeliver: 5,
        ackWaitMs: 30_000,
        ...overrides,
      });
      const all = async (messages: AsyncIterable<StoredMessage>, count: number) => {
        const seen: StoredMessage[] = [];
        for await (const message of messages) {
          seen.push(message);
          if (seen.length === count) break;
        }
        return seen;
      };

      it('expected last sequence - a publish behind its subject is a ConflictError; 0 means the subject is empty', async () => {
        const t = unique();
        const stream = await (await bus()).durableStream(eventsFor(t));
        const subject = `test.${t.id}.q1.events`;
        const first = await stream.publish(subject, text('1'), { msgId: 'q1/a/1', expectedLastSubjectSeq: 0 });
        // Another subject's messages do not count: the check is per subject.
        await stream.publish(`test.${t.id}.q2.events`, text('other'), { msgId: 'q2/a/1', expectedLastSubjectSeq: 0 });
        const lost = await rejection(
          stream.publish(subject, text('1'), { msgId: 'q1/b/1', expectedLastSubjectSeq: 0 }),
        );
        expect(lost).toBeInstanceOf(ConflictError);
        const second = await stream.publish(subject, text('2'), {
          msgId: 'q1/a/2',
          expectedLastSubjectSeq: first.seq,
        });
        expect(second.duplicate).toBe(false);
        // A publish retried after its ack was lost is a duplicate, not a conflict.
        expect(await stream.publish(subject, text('1'), { msgId: 'q1/a/1', expectedLastSubjectSeq: 0 })).toEqual({
          duplicate: true,
          seq: first.seq,
        });
      });

      it('last - the last message of a subject with its headers and sequence; none for an empty subject', async () => {
        const t = unique();
        const [writer, reader] = [await bus(), await bus()];
        const stream = await writer.durableStream(eventsFor(t));
        const subject = `test.${t.id}.q1.events`;
        await stream.publish(subject, text('one'), { msgId: 'one' });
        const two = await stream.publish(subject, text('two'), { msgId: 'two', headers: { 'Hopline-Owner': 'acme' } });
        await stream.publish(`test.${t.id}.q2.events`, text('elsewhere'), { msgId: 'three' });
        const readerStream = await reader.durableStream(eventsFor(t));
        const last = await readerStream.last(subject);
        expect(last && { seq: last.seq, data: read(last.data), owner: last.headers['Hopline-Owner'] }).toEqual({
          seq: two.seq,
          data: 'two',
          owner: 'acme',
        });
        expect(await readerStream.last(`test.${t.id}.q3.events`)).toBeUndefined();
      });

      it.each([false, true])(
        'follow - reads a subject from its first message, then each new one in order, until the signal aborts (shared reading: %s)',
        async (sharedFollow) => {
          const t = unique();
          const [writer, reader] = [await bus(), await bus()];
          const stream = await writer.durableStream(eventsFor(t, { sharedFollow }));
          const subject = `test.${t.id}.q1.events`;
          await stream.publish(subject, text('1'), { msgId: '1' });
          await stream.publish(`test.${t.id}.q2.events`, text('not mine'), { msgId: 'x' });
          await stream.publish(subject, text('2'), { msgId: '2' });
          const stop = new AbortController();
          const seen: string[] = [];
          const reading = (async () => {
            for await (const message of (await reader.durableStream(eventsFor(t, { sharedFollow }))).follow(subject, {
              signal: stop.signal,
            }))
              seen.push(read(message.data));
          })();
          await waitFor(() => seen.length === 2);
          for (let i = 3; i <= 20; i++) await stream.publish(subject, text(String(i)), { msgId: String(i) });
          await waitFor(() => seen.length === 20);
          stop.abort();
          await reading;
          expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 1)));
        },
      );

      it.each([false, true])(
        'follow - breaking out of the reading stops it; a second reader starts again from the first message (shared reading: %s)',
        async (sharedFollow) => {
          const t = unique();
          const stream = await (await bus()).durableStream(eventsFor(t, { sharedFollow }));
          const subject = `test.${t.id}.q1.events`;
          for (let i = 1; i <= 3; i++) await stream.publish(subject, text(String(i)), { msgId: String(i) });
          const signal = new AbortController().signal;
          expect((await all(stream.follow(subject, { signal }), 2)).map((m) => read(m.data))).toEqual(['1', '2']);
          expect((await all(stream.follow(subject, { signal }), 3)).map((m) => read(m.data))).toEqual(['1', '2', '3']);
        },
      );

      it('follow - only new: a follow first read while the shared reading runs gets what is stored after, not before', async () => {
        const t = unique();
        const [writer, reader] = [await bus(), await bus()];
        const stream = await writer.durableStream(eventsFor(t, { sharedFollow: true }));
        const readerStream = await reader.durableStream(eventsFor(t, { sharedFollow: true }));
        const subject = `test.${t.id}.q1.events`;
        await stream.publish(subject, text('before'), { msgId: 'before' });
        // Another subject's follow starts the process's reading of the stream.
        const stop = new AbortController();
        const other = readerStream.follow(`test.${t.id}.q2.events`, { signal: stop.signal })[Symbol.asyncIterator]();
        const otherFirst = other.next();
        await stream.publish(`test.${t.id}.q2.events`, text('started'), { msgId: 'started' });
        expect(read((await otherFirst).value?.data ?? new Uint8Array())).toBe('started');
        const fresh = readerStream.follow(subject, { signal: stop.signal, onlyNew: true })[Symbol.asyncIterator]();
        const first = fresh.next();
        await stream.publish(subject, text('after'), { msgId: 'after' });
        expect(read((await first).value?.data ?? new Uint8Array())).toBe('after');
        stop.abort();
        await Promise.all([fresh.return?.(undefined), other.return?.(undefined)]);
      });

      it.each([false, true])(
        'follow - says when it caught up: after the messages stored before it, before those stored after; at once for an empty subject (shared reading: %s)',
        async (sharedFollow) => {
          const t = unique();
          const [writer, reader] = [await bus(), await bus()];
          const stream = await writer.durableStream(eventsFor(t, { sharedFollow }));
          const readerStream = await reader.durableStream(eventsFor(t, { sharedFollow }));
          const [held, empty] = [`test.${t.id}.q1.events`, `test.${t.id}.q2.events`];
          for (const value of ['1', '2']) await stream.publish(held, text(value), { msgId: value });
          const stop = new AbortController();
          const record = (subject: string) => {
            const seen: string[] = [];
            const reading = (async () => {
              const onCaughtUp = () => seen.push('caught up');
              for await (const message of readerStream.follow(subject, { signal: stop.signal, onCaughtUp }))
                seen.push(read(message.data));
            })();
            return { seen, reading };
          };
          const [heldFollow, emptyFollow] = [record(held), record(empty)];
          await waitFor(() => heldFollow.seen.length === 3 && emptyFollow.seen.length === 1);
          await stream.publish(held, text('3'), { msgId: '3' });
          await stream.publish(empty, text('new'), { msgId: 'new' });
          await waitFor(() => heldFollow.seen.length === 4 && emptyFollow.seen.length === 2);
          stop.abort();
          await Promise.all([heldFollow.reading, emptyFollow.reading]);
          expect(heldFollow.seen).toEqual(['1', '2', 'caught up', '3']);
          expect(emptyFollow.seen).toEqual(['caught up', 'new']);
        },
      );

      it('purge - removes every message of one subject: nobody is handed a purged job', async () => {
        const t = unique();
        const connection = await bus();
        const jobs = await connection.durableStream(jobsFor(t));
        await jobs.publish(`test.${t.id}.q1.ask`, text('withdrawn'), { msgId: 'q1' });
        await jobs.publish(`test.${t.id}.q2.ask`, text('kept'), { msgId: 'q2' });
        await jobs.purge(`test.${t.id}.q1.ask`);
        expect(await jobs.last(`test.${t.id}.q1.ask`)).toBeUndefined();
        const taken: string[] = [];
        await jobs.consume(jobConsumer(t), async (message) => {
          taken.push(read(message.data));
          return { kind: 'ack' };
        });
        await waitFor(() => taken.length === 1);
        expect(taken).toEqual(['kept']);
      });

      it('work queue - an acked or terminated job leaves the stream; one being handled stays', async () => {
        const t = unique();
        const connection = await bus();
        const jobs = await connection.durableStream(jobsFor(t));
        for (const id of ['acked', 'terminated', 'running'])
          await jobs.publish(`test.${t.id}.${id}.ask`, text(id), { msgId: id });
        const running = gate();
        const handled: string[] = [];
        await jobs.consume(jobConsumer(t, { maxInFlight: 3 }), async (message): Promise<Settlement> => {
          const id = read(message.data);
          handled.push(id);
          if (id === 'running') await running.opened;
          return id === 'terminated' ? { kind: 'terminate', reason: 'no longer wanted' } : { kind: 'ack' };
        });
        await waitFor(async () => (await jobs.last(`test.${t.id}.terminated.ask`)) === undefined);
        await waitFor(async () => (await jobs.last(`test.${t.id}.acked.ask`)) === undefined);
        expect(await jobs.last(`test.${t.id}.running.ask`)).toBeDefined();
        running.open();
        await waitFor(async () => (await jobs.last(`test.${t.id}.running.ask`)) === undefined);
        expect(handled.sort()).toEqual(['acked', 'running', 'terminated']);
      });

      it('work queue - a stream cannot become a work queue once created', async () => {
        const t = unique();
        const connection = await bus();
        await connection.durableStream(eventsFor(t));
        await expect(connection.durableStream({ ...eventsFor(t), workQueue: true })).rejects.toBeInstanceOf(
          ValidationError,
        );
      });

      it('streams - a stream whose subjects another stream takes is refused, as JetStream refuses it', async () => {
        const t = unique();
        const connection = await bus();
        await connection.durableStream(eventsFor(t));
        await expect(connection.durableStream({ name: `OTHER_${t.id}`, subjects: [`test.${t.id}.>`] })).rejects.toThrow(
          /overlap/,
        );
        // Subjects apart from the first stream's are taken.
        await connection.durableStream({ name: `APART_${t.id}`, subjects: [`test.${t.id}.*.jobs`] });
      });

      it('work queue - a second durable consumer for some of the same subjects is refused', async () => {
        const t = unique();
        const connection = await bus();
        const jobs = await connection.durableStream(jobsFor(t));
        const take = async (): Promise<Settlement> => ({ kind: 'ack' });
        await jobs.consume(jobConsumer(t, { durable: t.name('first'), filterSubject: `test.${t.id}.*.ask` }), take);
        await expect(
          jobs.consume(jobConsumer(t, { durable: t.name('second'), filterSubject: `test.${t.id}.q1.ask` }), take),
        ).rejects.toThrow();
      });

      it('max in flight - a consumer holds at most its room; a second member of the durable takes the rest', async () => {
        const t = unique();
        const [first, second, producer] = [await bus(), await bus(), await bus()];
        const jobs = await producer.durableStream(jobsFor(t));
        const release = gate();
        const holders: Record<string, string[]> = { first: [], second: [] };
        const member =
          (name: 'first' | 'second') =>
          async (message: StreamMessage): Promise<Settlement> => {
            holders[name]?.push(read(message.data));
            await release.opened;
            return { kind: 'ack' };
          };
        await (await first.durableStream(jobsFor(t))).consume(jobConsumer(t, { maxInFlight: 2 }), member('first'));
        for (let i = 1; i <= 3; i++) await jobs.publish(`test.${t.id}.q${i}.ask`, text(`q${i}`), { msgId: `q${i}` });
        await waitFor(() => holders.first?.length === 2);
        await (await second.durableStream(jobsFor(t))).consume(jobConsumer(t, { maxInFlight: 2 }), member('second'));
        await waitFor(() => holders.second?.length === 1, { timeoutMs: 10_000 });
        expect(holders.first).toHaveLength(2);
        release.open();
      });

      it('keep alive - a handler working past the ack wait keeps its job; an abandoned job goes to another member', async () => {
        const t = unique();
        const [one, other, producer] = [await bus(), await bus(), await bus()];
        const jobs = await producer.durableStream(jobsFor(t));
        await jobs.publish(`test.${t.id}.slow.ask`, text('slow'), { msgId: 'slow' });
        const options = jobConsumer(t, { ackWaitMs: 600, keepAlive: true });
        const deliveries: string[] = [];
        const longWork = gate();
        const firstConsumer = await (
          await one.durableStream(jobsFor(t))
        ).consume(options, async (message): Promise<Settlement> => {
          deliveries.push(`one#${message.deliveryCount}`);
          await longWork.opened;
          // Someone else owns the job now (as a reasoner superseded by another attempt would find).
          return { kind: 'abandon' };
        });
        await waitFor(() => deliveries.length === 1);
        await (
          await other.durableStream(jobsFor(t))
        ).consume(options, async (message) => {
          deliveries.push(`other#${message.deliveryCount}`);
          return { kind: 'ack' };
        });
        // Nothing to poll for: what is checked is that nothing happens for three ack waits of work.
        await sleep(3 * options.ackWaitMs);
        expect(deliveries).toEqual(['one#1']);
        longWork.open();
        await firstConsumer.stop();
        await waitFor(() => deliveries.length === 2, { timeoutMs: 10_000 });
        expect(deliveries).toEqual(['one#1', 'other#2']);
        await waitFor(async () => (await jobs.last(`test.${t.id}.slow.ask`)) === undefined);
      });
    });

    describe('key-value', () => {
      it('kv - a value put by one connection is read by another; missing keys are undefined', async () => {
        const t = unique();
        const [writer, reader] = [await bus(), await bus()];
        const bucket = `test_${t.id}`;
        const written = await writer.keyValue({ bucket });
        await written.put('q-1', text('trace v1'));
        await written.put('q-1', text('trace v2'));
        const store = await reader.keyValue({ bucket });
        expect(read((await store.get('q-1')) ?? new Uint8Array(0))).toBe('trace v2');
        expect(await store.get('q-unknown')).toBeUndefined();
      });

      it('kv - a watch sees the key empty, then every value another connection puts, until stopped', async () => {
        const t = unique();
        const bucket = `test_${t.id}`;
        const [writer, watcher] = [await (await bus()).keyValue({ bucket }), await (await bus()).keyValue({ bucket })];
        const seen: string[] = [];
        const watch = await watcher.watch('controls', (value) => seen.push(value ? read(value) : '(none)'));
        await waitFor(() => seen.length === 1);
        await writer.put('controls', text('off'));
        await writer.put('other', text('not watched'));
        await writer.put('controls', text('on'));
        await waitFor(() => seen.length === 3);
        watch.stop();
        await writer.put('controls', text('after stop'));
        // The later watch starts from the last value, which the stopped one never saw.
        const later: string[] = [];
        const laterWatch = await watcher.watch('controls', (value) => later.push(value ? read(value) : '(none)'));
        await waitFor(() => later.length === 1);
        laterWatch.stop();
        expect(later).toEqual(['after stop']);
        expect(seen).toEqual(['(none)', 'off', 'on']);
      });

      it('kv - a conditional put writes where nothing is stored or what is stored may go, and keeps what must stay', async () => {
        const t = unique();
        const store = await (await bus()).keyValue({ bucket: `test_${t.id}` });
        const keepsNewer = (mine: number) => (stored: Uint8Array) => Number(read(stored)) > mine;
        expect(await store.putUnless('trace', text('2'), keepsNewer(2))).toBe(true);
        expect(await store.putUnless('trace', text('1'), keepsNewer(1))).toBe(false);
        expect(await store.putUnless('trace', text('3'), keepsNewer(3))).toBe(true);
        expect(read((await store.get('trace')) ?? new Uint8Array(0))).toBe('3');
      });

      it("kv - a conditional put judges what another connection put since this one's last put, not what it put itself", async () => {
        const t = unique();
        const bucket = `test_${t.id}`;
        const [mine, other] = [await (await bus()).keyValue({ bucket }), await (await bus()).keyValue({ bucket })];
        const keepsNewer = (own: number) => (stored: Uint8Array) => Number(read(stored)) > own;
        const stored = async () => read((await other.get('trace')) ?? new Uint8Array(0));
        expect(await mine.putUnless('trace', text('1'), keepsNewer(1))).toBe(true);
        await other.put('trace', text('3'));
        expect(await mine.putUnless('trace', text('2'), keepsNewer(2))).toBe(false);
        expect(await stored()).toBe('3');
        // Its own last value would stay, but another's has replaced it since: that one is judged.
        expect(await mine.putUnless('trace', text('5'), keepsNewer(5))).toBe(true);
        await other.put('trace', text('1'));
        expect(await mine.putUnless('trace', text('2'), keepsNewer(2))).toBe(true);
        expect(await stored()).toBe('2');
      });

      it('kv - conditional puts from two connections racing on one key: the value that must stay is never overwritten', async () => {
        const t = unique();
        const bucket = `test_${t.id}`;
        const [older, newer] = [await (await bus()).keyValue({ bucket }), await (await bus()).keyValue({ bucket })];
        const keepsNewer = (mine: number) => (stored: Uint8Array) => Number(read(stored)) > mine;
        const keys = Array.from({ length: 40 }, (_, i) => `q-${i}`);
        // Each key's read and write by one side can fall between the other's: only a
        // compare-and-set keeps the older write from landing last.
        await Promise.all(
          keys.flatMap((key) => [
            older.putUnless(key, text('1'), keepsNewer(1)),
            newer.putUnless(key, text('2'), keepsNewer(2)),
          ]),
        );
        const stored = await Promise.all(keys.map(async (key) => read((await newer.get(key)) ?? new Uint8Array(0))));
        expect(stored).toEqual(keys.map(() => '2'));
      });

      it('kv - keys JetStream would refuse are refused with a ValidationError', async () => {
        const t = unique();
        const store = await (await bus()).keyValue({ bucket: `test_${t.id}` });
        await expect(store.put('has space', text(''))).rejects.toBeInstanceOf(ValidationError);
        await expect(store.get('.hidden')).rejects.toBeInstanceOf(ValidationError);
      });
    });
  });
}
