import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PROTO_FILES, PROTO_ROOT } from '@hopline/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../../services/answer-gateway/test/support/harness.js';
import { hasPythonGrpc, PYTHON, requireTool } from './support.js';

const run = promisify(execFile);
const CLIENT = fileURLToPath(new URL('./ask_client.py', import.meta.url));
const enabled = requireTool('python3-grpcio', hasPythonGrpc(), 'apt-get install -y python3-grpcio python3-grpc-tools');

/**
 * The proto/ files as the installed grpc_tools can compile them. Debian bookworm's
 * python3-grpc-tools bundles protoc 3.5, which predates proto3 `optional` (3.15): for it the
 * label is dropped from a copy. Field numbers and types stay, so the wire format is the same;
 * only field presence is lost, which this client never reads.
 */
async function protoSourcesFor(workDir: string): Promise<string> {
  const { stdout } = await run(PYTHON, ['-m', 'grpc_tools.protoc', '--version']);
  const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(stdout)?.slice(1) ?? []).map(Number);
  if (major > 3 || (major === 3 && minor >= 15)) return PROTO_ROOT;
  const copy = join(workDir, 'proto-src');
  for (const file of PROTO_FILES) {
    await mkdir(dirname(join(copy, file)), { recursive: true });
    await writeFile(
      join(copy, file),
      (await readFile(join(PROTO_ROOT, file), 'utf8')).replace(/^(\s*)optional /gm, '$1'),
    );
  }
  return copy;
}

describe.skipIf(!enabled)('a Python gRPC client generated from proto/ streams an answer', () => {
  let stubs = '';

  beforeAll(async () => {
    stubs = await mkdtemp(join(tmpdir(), 'hopline-py-stubs-'));
    const protos = await protoSourcesFor(stubs);
    await run(PYTHON, [
      '-m',
      'grpc_tools.protoc',
      `-I${protos}`,
      `--python_out=${stubs}`,
      `--grpc_python_out=${stubs}`,
      ...PROTO_FILES,
    ]);
  });

  afterAll(async () => {
    if (stubs) await rm(stubs, { recursive: true, force: true });
  });

  async function askFromPython(
    address: string,
    key: string,
    question: string,
    ...rest: string[]
  ): Promise<Array<Record<string, unknown>>> {
    const { stdout } = await run(PYTHON, [CLIENT, address, key, question, ...rest], {
      env: { ...process.env, PYTHONPATH: stubs },
      timeout: 60_000,
    });
    return stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  it('python3-grpcio streams hops, tokens and a cited done from AnswerGateway.Ask', async () => {
    await using t = await startTestGateway();
    const lines = await askFromPython(
      t.grpcAddress,
      t.keys.alice.key,
      'Which department does the owner of project Atlas belong to?',
      '3',
      'projects',
    );
    expect(lines.at(-1)).toEqual({ status: 'OK' });
    const events = lines.slice(0, -1).map((line) => line.event as Record<string, unknown>);
    const kinds = events.map((event) =>
      Object.keys(event).find((key) => !['questionId', 'seq', 'attempt', 'atUnixMs'].includes(key)),
    );
    expect(kinds.slice(0, 5)).toEqual(['accepted', 'route', 'hopStarted', 'retrieval', 'hopAnswer']);
    expect(kinds.at(-1)).toBe('done');
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    const done = events.at(-1)?.done as Record<string, unknown>;
    expect(done).toMatchObject({ stopReason: 'SUFFICIENT', hops: 2 });
    expect(done.citations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ docId: `${t.keys.alice.tenantId}-people`, bridgeEntity: 'Dana Reyes' }),
      ]),
    );
    expect(t.reasoner.asks[0]?.ctx?.scope?.kbIds).toEqual(['projects']);
    expect(t.reasoner.asks[0]?.maxHops).toBe(3);
  });

  it('python3-grpcio gets UNAUTHENTICATED without a key and PERMISSION_DENIED outside its scope', async () => {
    await using t = await startTestGateway();
    expect((await askFromPython(t.grpcAddress, '', 'Who owns Atlas?')).at(-1)).toMatchObject({
      status: 'UNAUTHENTICATED',
    });
    expect(
      (await askFromPython(t.grpcAddress, t.keys.bob.key, 'Who owns Atlas?', '0', 'projects')).at(-1),
    ).toMatchObject({ status: 'PERMISSION_DENIED' });
    expect(t.reasoner.asks).toHaveLength(0);
  });
});
