import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, env, envVariables, loadConfig, telemetryEnv } from '../src/index.js';

const schema = z.object({
  HTTP_PORT: env.port(8080),
  NATS_URL: env.url().optional(),
  DEBUG: env.boolean(false),
  KB_IDS: env.list().optional(),
});

describe('config', () => {
  it('config - defaults apply when variables are absent or empty', () => {
    expect(loadConfig('svc', schema, { NATS_URL: '' })).toEqual({ HTTP_PORT: 8080, DEBUG: false });
  });

  it('config - values are coerced from strings', () => {
    const config = loadConfig('svc', schema, {
      HTTP_PORT: '9000',
      DEBUG: 'true',
      KB_IDS: 'a, b,,c',
      NATS_URL: 'nats://127.0.0.1:4222',
    });
    expect(config).toEqual({
      HTTP_PORT: 9000,
      DEBUG: true,
      KB_IDS: ['a', 'b', 'c'],
      NATS_URL: 'nats://127.0.0.1:4222',
    });
  });

  it('config - a URL list (a NATS cluster) is taken as written; one item that is no URL is refused', () => {
    const urls = z.object({ NATS_URL: env.endpoints('NATS_USER') });
    const cluster = 'nats://10.0.0.1:4222, nats://10.0.0.2:4222,nats://10.0.0.3:4222';
    expect(loadConfig('svc', urls, { NATS_URL: cluster })).toEqual({ NATS_URL: cluster });
    expect(() => loadConfig('svc', urls, { NATS_URL: 'nats://10.0.0.1:4222,not a url' })).toThrow(ConfigError);
  });

  it('config - an endpoint carrying user:password is refused, naming where they go, without showing them', () => {
    const endpoints = z.object({
      NATS_URL: env.endpoints('NATS_USER and NATS_PASSWORD'),
      RERANK_URL: env.endpoint('RERANK_API_KEY'),
    });
    const problems = (() => {
      try {
        loadConfig('svc', endpoints, {
          NATS_URL: 'nats://10.0.0.1:4222,nats://ops:s3cret@10.0.0.2:4222',
          RERANK_URL: 'http://user:s3cret@10.0.0.3:8080',
        });
      } catch (error) {
        return (error as ConfigError).problems.join('\n');
      }
      return '';
    })();
    expect(problems).toMatch(/NATS_URL: must not carry user:password.*NATS_USER and NATS_PASSWORD/);
    expect(problems).toMatch(/RERANK_URL: must not carry user:password.*RERANK_API_KEY/);
    expect(problems).not.toContain('s3cret');
    const plain = { NATS_URL: 'nats://10.0.0.1:4222', RERANK_URL: 'http://10.0.0.3:8080' };
    expect(loadConfig('svc', endpoints, plain)).toEqual(plain);
  });

  it('config - every invalid variable is named in one error', () => {
    try {
      loadConfig('svc', schema, { HTTP_PORT: 'eighty', NATS_URL: 'not a url' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.join('\n')).toMatch(/HTTP_PORT[\s\S]*NATS_URL/);
    }
  });

  it('config - the schema lists the variables it reads', () => {
    expect(envVariables(schema)).toEqual(['DEBUG', 'HTTP_PORT', 'KB_IDS', 'NATS_URL']);
  });

  it('config - the OpenTelemetry variables the telemetry SDK reads are declared, with the values it takes', () => {
    const telemetry = z.object(telemetryEnv);
    expect(
      loadConfig('svc', telemetry, {
        OTEL_TRACES_EXPORTER: 'otlp,console',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }),
    ).toEqual({
      OTEL_TRACES_EXPORTER: 'otlp,console',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: 0.25,
    });
    for (const invalid of [
      { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'thrift' },
      { OTEL_TRACES_SAMPLER: 'always-on' },
      { OTEL_TRACES_SAMPLER_ARG: '2' },
    ]) {
      expect(() => loadConfig('svc', telemetry, invalid), JSON.stringify(invalid)).toThrow(ConfigError);
    }
  });
});
