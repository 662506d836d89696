import { describe, expect, it } from 'vitest';
import { mutualTlsFrom } from '../src/index.js';

describe('mutualTlsFrom', () => {
  it('grpc tls - none of the variables is plaintext', () => {
    expect(mutualTlsFrom({})).toBeUndefined();
  });

  it('grpc tls - some but not all of the three are refused, naming the missing ones', () => {
    expect(() => mutualTlsFrom({ GRPC_TLS_CERT: 'tls.crt', GRPC_TLS_KEY: 'tls.key' })).toThrow(/missing GRPC_TLS_CA$/);
    expect(() => mutualTlsFrom({ GRPC_TLS_CA: 'ca.crt' })).toThrow(/missing GRPC_TLS_CERT, GRPC_TLS_KEY/);
  });
});
