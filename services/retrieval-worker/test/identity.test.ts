import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '@hopline/contracts';
import { workerIdentity } from '../src/identity.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'worker-identity-'));
  dirs.push(dir);
  return dir;
}

describe('retrieval-worker - its identity', () => {
  it('identity - one made on first start is kept in the data directory and read back on the next', async () => {
    const dir = dataDir();
    const made = await workerIdentity(undefined, dir);
    expect(made).toMatch(/^[A-Za-z0-9_-]{1,128}$/);
    expect(readFileSync(join(dir, 'worker-id'), 'utf8').trim()).toBe(made);
    expect(await workerIdentity(undefined, dir)).toBe(made);
  });

  it.each([
    ['a dot, which would add a subject token', 'worker.a'],
    ['a wildcard', 'worker-*'],
    ['a space inside', 'worker a'],
    ['more than 128 characters', 'w'.repeat(129)],
  ])('identity - a worker-id file edited to hold %s fails start-up naming the file and the rule', async (_case, id) => {
    const dir = dataDir();
    writeFileSync(join(dir, 'worker-id'), `${id}\n`);
    const refusal = workerIdentity(undefined, dir);
    await expect(refusal).rejects.toBeInstanceOf(ValidationError);
    await expect(refusal).rejects.toThrow(`the worker id in ${join(dir, 'worker-id')} must be 1-128 characters`);
  });
});
