import * as grpc from '@grpc/grpc-js';
import { CancelledError, HoplineError, type AskRequest__Output, type QaEvent__Output } from '@hopline/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient, ERROR_CODE_METADATA_KEY, type StreamWriter } from '../src/index.js';
import { startStallingProxy } from '@hopline/test-support';
import { hopline, startServer } from './fixtures.js';
import type { QaEvent } from '@hopline/contracts';

type AskBehaviour = (request: AskRequest__Output, stream: StreamWriter<QaEvent>) => Promise<void>;
let behaviour: AskBehaviour;
const streams: StreamWriter<QaEvent>[] = [];

let fixture: Awaited<ReturnType<typeof startServer>>;
let client: InstanceType<typeof hopline.AnswerGateway>;

beforeAll(async () => {
  fixture = await startServer((server) =>
    server.addService(hopline.AnswerGateway, {
      Ask: async (request, stream) => {
        streams.push(stream);
        await behaviour(request, stream);
      },
    }),
  );
  client = createClient(hopline.AnswerGateway, fixture.address);
});
afterAll(async () => {
  client.close();
  await fixture.dispose();
});
beforeEach(() => {
  streams.length = 0;
});

function collect(call: grpc.ClientReadableStream<QaEvent__Output>) {
  const events: QaEvent__Output[] = [];
  const ended = new Promise<{ events: QaEvent__Output[]; error?: grpc.ServiceError }>((resolve) => {
    call.on('data', (event: QaEvent__Output) => events.push(event));
    call.on('end', () => resolve({ events }));
    call.on('error', (error: grpc.ServiceError) => resolve({ events, error }));
  });
  return { events, ended };
}

const ask = () =>
  client.Ask({ question: 'who coached the team that won?', kbIds: ['demo'] }, { deadline: Date.now() + 10_000 });

describe('gRPC server streaming', () => {
  it('stream - every written event arrives in order, then the stream ends cleanly', async () => {
    behaviour = async (request, stream) => {
      for (let seq = 1; seq <= 5; seq += 1)
        await stream.write({ questionId: request.question.slice(0, 3), seq, token: { text: `t${seq}` } });
    };
    const { events, error } = await collect(ask()).ended;
    expect(error).toBeUndefined();
    expect(events.map((event) => [event.questionId, event.seq, event.token?.text])).toEqual(
      [1, 2, 3, 4, 5].map((seq) => ['who', seq, `t${seq}`]),
    );
  });

  it('stream - a handler failure ends the stream with its status and Hopline code after the events already sent', async () => {
    behaviour = async (_request, stream) => {
      await stream.write({ seq: 1 });
      throw new HoplineError('permission_denied', 'kb demo is not yours');
    };
    const { events, error } = await collect(ask()).ended;
    expect(events.map((event) => event.seq)).toEqual([1]);
    expect(error?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(error?.details).toBe('kb demo is not yours');
    expect(error?.metadata.get(ERROR_CODE_METADATA_KEY)).toEqual(['permission_denied']);
  });

  it("stream - a client that cancels aborts the handler's signal and its pending writes reject", async () => {
    let writes = 0;
    let writeError: unknown;
    behaviour = async (_request, stream) => {
      try {
        for (;;) {
          await stream.write({ seq: ++writes, token: { text: 'x'.repeat(1024) } });
        }
      } catch (error) {
        writeError = error;
      }
    };
    const call = ask();
    const { events } = collect(call);
    await vi.waitFor(() => expect(events.length).toBeGreaterThan(3));
    call.cancel();
    await vi.waitFor(() => expect(streams[0]?.signal.aborted).toBe(true));
    await vi.waitFor(() => expect(writeError).toBeInstanceOf(CancelledError));
  });

  it('stream - write waits for the transport to drain when the client stops reading, and resumes when it reads again', async () => {
    const total = 2_000;
    let written = 0;
    behaviour = async (_request, stream) => {
      for (let seq = 1; seq <= total; seq += 1) {
        await stream.write({ seq, token: { text: 'y'.repeat(20_000) } });
        written += 1;
      }
    };
    // grpc-js takes whatever arrives though the call is paused: a stall must be the socket's.
    await using proxy = await startStallingProxy(Number(fixture.address.split(':')[1]));
    const stalled = createClient(hopline.AnswerGateway, proxy.address);
    try {
      const call = stalled.Ask({ question: 'q', kbIds: ['demo'] }, { deadline: Date.now() + 20_000 });
      const received = collect(call);
      await vi.waitFor(() => expect(received.events.length).toBeGreaterThan(0), { timeout: 5_000 });
      proxy.stall();
      // Writes stop: one waits on 'drain' for as long as the client reads nothing.
      let seen = -1;
      await vi.waitFor(
        () => {
          const now = written;
          const still = now === seen;
          seen = now;
          expect(still).toBe(true);
        },
        { timeout: 10_000, interval: 250 },
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(written).toBe(seen);
      expect(written).toBeLessThan(total);
      proxy.resume();
      const { events, error } = await received.ended;
      expect(error).toBeUndefined();
      expect(written).toBe(total);
      expect(events.map((event) => event.seq)).toEqual(Array.from({ length: total }, (_, index) => index + 1));
    } finally {
      stalled.close();
    }
  });
});

describe('gRPC server streaming with a stall bound', () => {
  it('stream - a write the client takes nothing of for streamStallMs rejects UNAVAILABLE, so the handler ends; the client then reads what was sent, and that status', async () => {
    let handlerError: unknown;
    let written = 0;
    const stalling = await startServer(
      (server) =>
        server.addService(hopline.AnswerGateway, {
          Ask: async (_request, stream) => {
            try {
              for (let seq = 1; seq <= 2_000; seq += 1) {
                await stream.write({ seq, token: { text: 'y'.repeat(20_000) } });
                written += 1;
              }
            } catch (error) {
              handlerError = error;
              throw error;
            }
          },
        }),
      { streamStallMs: 300 },
    );
    const port = Number(stalling.address.split(':')[1]);
    await using proxy = await startStallingProxy(port);
    const stallingClient = createClient(hopline.AnswerGateway, proxy.address);
    try {
      const call = stallingClient.Ask({ question: 'q', kbIds: ['demo'] }, { deadline: Date.now() + 20_000 });
      const received = collect(call);
      await vi.waitFor(() => expect(received.events.length).toBeGreaterThan(0), { timeout: 5_000 });
      proxy.stall();
      await vi.waitFor(() => expect(handlerError).toBeInstanceOf(HoplineError), { timeout: 10_000, interval: 20 });
      expect((handlerError as HoplineError).code).toBe('unavailable');
      expect(written).toBeLessThan(2_000);
      proxy.resume();
      const { events, error } = await received.ended;
      expect(events.map((event) => event.seq)).toEqual(Array.from({ length: events.length }, (_, index) => index + 1));
      expect(events.length).toBeGreaterThanOrEqual(written);
      expect(error?.code).toBe(grpc.status.UNAVAILABLE);
      expect(error?.details).toMatch(/took nothing of the stream for 300 ms/);
    } finally {
      stallingClient.close();
      await stalling.dispose();
    }
  });
});
