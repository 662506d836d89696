import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startServiceProcess } from './service-process.js';

describe('a service started as its own process', () => {
  it('that exits while starting is reported at once, with its output, not after the whole start-up timeout', async () => {
    // Its gRPC port is taken: the reranker cannot listen and exits.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    try {
      const error = await startServiceProcess(
        'reranker',
        { GRPC_HOST: '127.0.0.1', GRPC_PORT: String(address.port) },
        { startupTimeoutMs: 20_000 },
      ).then(
        () => undefined,
        (failure: unknown) => failure as Error,
      );
      expect(error?.message).toMatch(/reranker exited with/);
      expect(error?.message).toMatch(new RegExp(String(address.port)));
    } finally {
      taken.close();
    }
  }, 60_000);
});
