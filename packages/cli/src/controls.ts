// `pnpm controls [--multi-hop on|off] [--hop-cap 1..5]`: shows, and changes, the operators'
// controls of the reasoning in the JetStream key-value bucket the hop-reasoners watch. A change
// applies to the questions started after it, on every hop-reasoner, without a restart.
import { connectNatsBus, jetStreamPolicyFrom, natsSecurityFrom } from '@hopline/bus';
import { env, jetstreamEnv, loadConfig, natsSecurityEnv } from '@hopline/config';
import { jetstream, type NatsUserName } from '@hopline/contracts';
import { z } from 'zod';
import { parseCommandLine, UsageError } from './command.js';
import { changeOperatorControls, readOperatorControls } from './operator-controls.js';

const USAGE = `usage: pnpm controls [--multi-hop on|off] [--hop-cap N]

  without options  shows the controls in force
  --multi-hop off  every question is answered single-shot (one retrieval); on: multi-hop again
  --hop-cap N      no question takes more than N hops (1 to 5)

environment: NATS_URL (default nats://127.0.0.1:4222), the NATS_* credentials of a user that may
write $KV.${jetstream.controlsBucket}.> (pnpm fabric:credentials makes one: NATS_CREDS=
deploy/fabric/operator-controls/nats.creds NATS_CA=deploy/fabric/ca.crt), and the JETSTREAM_*
policy the services use.`;

const configSchema = z.object({
  ...jetstreamEnv,
  ...natsSecurityEnv,
  NATS_URL: env.endpoints('NATS_USER and NATS_PASSWORD (or NATS_CREDS, NATS_TOKEN)').default('nats://127.0.0.1:4222'),
});

function changeFrom(values: { 'multi-hop'?: string | undefined; 'hop-cap'?: string | undefined }) {
  const multiHop = values['multi-hop'];
  if (multiHop !== undefined && multiHop !== 'on' && multiHop !== 'off') {
    throw new UsageError(`--multi-hop takes on or off, got "${multiHop}"`);
  }
  const hopCap = values['hop-cap'];
  if (hopCap !== undefined && !/^[1-5]$/.test(hopCap)) throw new UsageError(`--hop-cap takes 1 to 5, got "${hopCap}"`);
  return {
    ...(multiHop !== undefined ? { multiHop: multiHop === 'on' } : {}),
    ...(hopCap !== undefined ? { hopCap: Number(hopCap) } : {}),
  };
}

try {
  const { values } = parseCommandLine({
    options: { 'multi-hop': { type: 'string' }, 'hop-cap': { type: 'string' } },
  });
  const change = changeFrom(values);
  const config = loadConfig('hopline-controls', configSchema);
  const bus = await connectNatsBus({
    url: config.NATS_URL,
    // The NATS user pnpm fabric:credentials makes for this command reads replies under this name.
    name: 'operator-controls' satisfies NatsUserName,
    jetstream: jetStreamPolicyFrom(config),
    security: natsSecurityFrom(config),
  });
  try {
    const bucket = await bus.keyValue({ bucket: jetstream.controlsBucket, retention: 'keep' });
    const controls =
      Object.keys(change).length > 0
        ? await changeOperatorControls(bucket, change)
        : await readOperatorControls(bucket);
    console.log(`multi-hop ${controls.multiHop ? 'on' : 'off'}, hop cap ${controls.hopCap}`);
  } finally {
    await bus.drain();
  }
} catch (error) {
  console.error(`error: ${(error as Error).message}${error instanceof UsageError ? `\n${USAGE}` : ''}`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
