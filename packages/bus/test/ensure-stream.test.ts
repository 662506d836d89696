import type { JetStreamManager, StreamConfig, StreamInfo } from 'nats';
import { NatsError, RetentionPolicy, StorageType } from 'nats';
import { describe, expect, it } from 'vitest';
import { DEFAULT_JETSTREAM_POLICY } from '../src/jetstream-policy.js';
import { ensureStream } from '../src/nats/jetstream.js';

const notFound = () => {
  const error = new NatsError('stream not found', '404');
  error.api_error = { code: 404, err_code: 10059, description: 'stream not found' };
  return error;
};

const clash = (errCode: number, description: string) => {
  const error = new NatsError(description, '400');
  error.api_error = { code: 400, err_code: errCode, description };
  return error;
};

/**
 * A stream manager whose look finds no stream the first time, and whose add is refused with
 * `refusal`: what a process sees when another created the stream between its look and its add.
 */
function managerRacedBy(refusal: NatsError, createdByOther: boolean, staleLooks = 1) {
  const calls: string[] = [];
  let looks = 0;
  const info = (name: string): StreamInfo =>
    ({
      config: { name, subjects: ['test.race.*'], storage: StorageType.File, retention: RetentionPolicy.Limits },
    }) as StreamInfo;
  const jsm = {
    streams: {
      info: async (name: string) => {
        calls.push('info');
        looks += 1;
        if (looks <= staleLooks || !createdByOther) throw notFound();
        return info(name);
      },
      add: async () => {
        calls.push('add');
        throw refusal;
      },
      update: async (name: string, config: Partial<StreamConfig>) => {
        calls.push('update');
        return { ...info(name), config: { ...info(name).config, ...config } } as StreamInfo;
      },
    },
  } as unknown as JetStreamManager;
  return { jsm, calls };
}

const ensure = (jsm: JetStreamManager, clashSettleMs?: number) =>
  ensureStream(jsm, 'RACE', { subjects: ['test.race.*'] }, 'keep', DEFAULT_JETSTREAM_POLICY, clashSettleMs);

describe('ensureStream - two processes creating one stream at once', () => {
  it.each([
    [10065, 'subjects overlap with an existing stream'],
    [10058, 'stream name already in use with a different configuration'],
  ])(
    'ensure stream - an add refused as a clash (%i) because another process created the stream meanwhile updates the one now there',
    async (code, description) => {
      const { jsm, calls } = managerRacedBy(clash(code, description), true);
      const info = await ensure(jsm);
      expect(calls).toEqual(['info', 'add', 'info', 'update']);
      expect(info.config.name).toBe('RACE');
    },
  );

  it('ensure stream - looks after a clash that still find no stream (a rejoined cluster node behind the add) look again until it shows', async () => {
    const { jsm, calls } = managerRacedBy(clash(10065, 'subjects overlap with an existing stream'), true, 3);
    const info = await ensure(jsm);
    expect(calls).toEqual(['info', 'add', 'info', 'info', 'info', 'update']);
    expect(info.config.name).toBe('RACE');
  });

  it("ensure stream - a clash with no such stream afterwards (another stream holds the subjects) is the add's own error", async () => {
    const refusal = clash(10065, 'subjects overlap with an existing stream');
    const { jsm, calls } = managerRacedBy(refusal, false);
    await expect(ensure(jsm, 0)).rejects.toBe(refusal);
    expect(calls).toEqual(['info', 'add', 'info']);
  });

  it('ensure stream - any other refusal of the add is not retried', async () => {
    const refusal = clash(10052, 'replicas > 1 not supported in non-clustered mode');
    const { jsm, calls } = managerRacedBy(refusal, true);
    await expect(ensure(jsm)).rejects.toBe(refusal);
    expect(calls).toEqual(['info', 'add']);
  });
});
