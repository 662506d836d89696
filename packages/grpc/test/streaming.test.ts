import * as grpc from '@grpc/grpc-js';
import { CancelledError, HoplineError, type AskRequest__Output, type QaEvent__Output } from '@hopline/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient, ERROR_CODE_METADATA_KEY, type StreamWriter } from '../src/index.js';
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
    const total = 400;
    let started = 0;
    let resolved = 0;
    behaviour = async (_request, stream) => {
      for (let seq = 1; seq <= total; seq += 1) {
        started += 1;
        await stream.write({ seq, token: { text: 'y'.repeat(20_000) } });
        resolved += 1;
      }
    };
    const call = ask();
    call.pause();
    const received: number[] = [];
    // A write that stays unresolved across timer ticks is one blocked on 'drain'.
    await vi.waitFor(() => expect(started - resolved).toBe(1), { timeout: 10_000, interval: 20 });
    expect(resolved).toBeLessThan(total);
    call.on('data', (event: QaEvent__Output) => received.push(event.seq));
    const ended = new Promise<void>((resolve, reject) => {
      call.on('end', resolve);
      call.on('error', reject);
    });
    call.resume();
    await ended;
    expect(resolved).toBe(total);
    expect(received).toEqual(Array.from({ length: total }, (_, index) => index + 1));
  });
});
