import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '@hopline/bus';
import { jetstream } from '@hopline/contracts';
import { changeOperatorControls, readOperatorControls } from '../src/operator-controls.js';

describe('pnpm controls', () => {
  it('two operators changing different controls at once both take effect: neither puts the other back', async () => {
    const bus = createMemoryBus();
    const bucket = await bus.keyValue({ bucket: jetstream.controlsBucket, retention: 'keep' });
    // One operator turns multi-hop off while another lowers the hop cap; both read the defaults first.
    const [first, second] = await Promise.all([
      changeOperatorControls(bucket, { multiHop: false }),
      changeOperatorControls(bucket, { hopCap: 2 }),
    ]);
    expect(await readOperatorControls(bucket)).toMatchObject({ multiHop: false, hopCap: 2 });
    // The one that wrote last reports both changes as in force.
    expect([first, second]).toContainEqual(expect.objectContaining({ multiHop: false, hopCap: 2 }));
    await bus.drain();
  });
});
