import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nkeys } from 'nats';
import { afterAll, describe, expect, it } from 'vitest';
import { natsSecurityFrom } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'hopline-nats-security-'));
const seedFile = join(dir, 'nats.nk');
// A fresh user seed, with the newline a file usually ends in.
writeFileSync(seedFile, `${new TextDecoder().decode(nkeys.createUser().getSeed())}\n`);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('natsSecurityFrom', () => {
  it('nats security - nothing set is an anonymous, plaintext connection', () => {
    expect(natsSecurityFrom({})).toEqual({});
  });

  it('nats security - a seed file authenticates, and a CA turns TLS on', () => {
    const security = natsSecurityFrom({ NATS_NKEY: seedFile, NATS_CA: join(dir, 'ca.crt') });
    expect(security.authenticator).toBeTypeOf('function');
    expect(security.tls).toEqual({ caFile: join(dir, 'ca.crt') });
  });

  it('nats security - two ways to authenticate at once are refused, naming both', () => {
    expect(() => natsSecurityFrom({ NATS_NKEY: seedFile, NATS_TOKEN: 't' })).toThrow(/NATS_NKEY and NATS_TOKEN/);
  });

  it('nats security - a user without a password, or a certificate without its key, is refused', () => {
    expect(() => natsSecurityFrom({ NATS_USER: 'gateway' })).toThrow(/NATS_USER needs NATS_PASSWORD/);
    expect(() => natsSecurityFrom({ NATS_PASSWORD: 'secret' })).toThrow(/NATS_PASSWORD needs NATS_USER/);
    expect(() => natsSecurityFrom({ NATS_CERT: join(dir, 'tls.crt') })).toThrow(/NATS_CERT and NATS_KEY/);
  });

  it('nats security - a seed or credentials file that cannot be read fails at start-up, naming its variable', () => {
    expect(() => natsSecurityFrom({ NATS_NKEY: join(dir, 'missing.nk') })).toThrow(/NATS_NKEY names .*missing\.nk/);
    expect(() => natsSecurityFrom({ NATS_CREDS: join(dir, 'missing.creds') })).toThrow(/NATS_CREDS names/);
  });
});
