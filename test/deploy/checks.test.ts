// The deployment checks themselves, on small broken inputs: each one must report the problem
// it exists for, or the suites over the real files would pass for the wrong reason.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { env, serviceEnv } from '@hopline/config';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { interpolate, parseDotEnv } from './support/compose.js';
import { baseImages, dockerIgnores, parseDockerfile, unpinnedReason } from './support/images.js';
import { requireTool } from '../gateway/support.js';
import { hasKubectl, ofKind, renderKustomization, validResource } from './support/kustomize.js';
import { resolveContainerEnv, type Container } from './support/kubernetes.js';
import { analysePromql } from './support/promql.js';
import { checkServiceEnvironment, hostAndPort, variablesNeededInContainer } from './support/service-env.js';

const schema = z.object({
  ...serviceEnv,
  NATS_URL: env.url().default('nats://127.0.0.1:4222'),
  GRPC_PORT: env.port(50061),
  API_TOKEN: z.string().min(1),
  OPENAI_BASE_URL: env.url().optional(),
});
const service = { name: 'demo-service', schema };
const complete = {
  OTEL_SERVICE_NAME: 'demo-service',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318',
  METRICS_PORT: '9464',
  NATS_URL: 'nats://nats:4222',
  API_TOKEN: 'secret',
};

describe('deploy checks', () => {
  test('deploy checks - a complete environment passes and yields the configuration the service starts with', () => {
    const report = checkServiceEnvironment(service, complete);
    expect(report).toMatchObject({ unread: [], missing: [], invalid: [] });
    expect(report.config).toMatchObject({ GRPC_PORT: 50061, METRICS_PORT: 9464, NATS_URL: 'nats://nats:4222' });
  });

  test('deploy checks - a variable the schema does not read is reported as unread', () => {
    expect(checkServiceEnvironment(service, { ...complete, LEGACY_FLAG: '1' }).unread).toEqual(['LEGACY_FLAG']);
  });

  test('deploy checks - required variables, loopback defaults, a random metrics port and the trace settings are needed in a container', () => {
    expect([...variablesNeededInContainer(schema).keys()].sort()).toEqual(
      ['API_TOKEN', 'METRICS_PORT', 'NATS_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_SERVICE_NAME'].sort(),
    );
    const { API_TOKEN: _omitted, ...withoutToken } = complete;
    const { missing } = checkServiceEnvironment(service, { ...withoutToken, NATS_URL: '' });
    expect(missing.map((line) => line.split(' ')[0])).toEqual(['NATS_URL', 'API_TOKEN']);
  });

  test('deploy checks - a service name that is not the folder name is reported', () => {
    expect(checkServiceEnvironment(service, { ...complete, OTEL_SERVICE_NAME: 'gateway' }).missing).toEqual([
      'OTEL_SERVICE_NAME must be "demo-service", not "gateway"',
    ]);
  });

  test('deploy checks - a value the schema rejects is reported with its variable', () => {
    const report = checkServiceEnvironment(service, { ...complete, GRPC_PORT: 'eighty' });
    expect(report.invalid.join('\n')).toContain('GRPC_PORT');
    expect(report.config).toBeUndefined();
  });

  test('deploy checks - addresses are read from URLs and host:port, and nothing else', () => {
    expect(hostAndPort('nats://nats:4222')).toEqual({ host: 'nats', port: 4222 });
    expect(hostAndPort('http://jaeger:4318/v1/traces')).toEqual({ host: 'jaeger', port: 4318 });
    expect(hostAndPort('http://elasticsearch')).toEqual({ host: 'elasticsearch', port: 80 });
    expect(hostAndPort('reranker:50062')).toEqual({ host: 'reranker', port: 50062 });
    expect(hostAndPort('http/protobuf')).toBeUndefined();
    expect(hostAndPort('deployment.environment.name=compose')).toBeUndefined();
  });

  test('deploy checks - latest, missing, floating and unsubstituted tags are not pinned; versions and digests are', () => {
    expect(unpinnedReason('redis')).toContain('no tag');
    expect(unpinnedReason('redis:latest')).toContain('latest');
    expect(unpinnedReason('node:22-slim')).toContain('floating');
    expect(unpinnedReason('redis:7.4-alpine')).toContain('floating');
    expect(unpinnedReason('hopline/x:${HOPLINE_VERSION}')).toContain('unsubstituted');
    expect(unpinnedReason('registry.local:5000/nats:2.11.9-alpine')).toBeUndefined();
    expect(unpinnedReason('minio/minio:RELEASE.2024-12-18T13-15-44Z')).toBeUndefined();
    expect(unpinnedReason(`node@sha256:${'a'.repeat(64)}`)).toBeUndefined();
    expect(unpinnedReason('node@sha256:abc')).toContain('malformed');
  });

  test('deploy checks - Dockerfile bases resolve ARG defaults and build args, and skip earlier stages', () => {
    const dockerfile =
      'ARG BASE=node:22.1.0-slim\nARG OTHER\nFROM ${BASE} AS build\nRUN true\nFROM build AS test\nFROM $OTHER\n';
    expect(baseImages(parseDockerfile(dockerfile))).toEqual(['node:22.1.0-slim', '$OTHER']);
    expect(baseImages(parseDockerfile(dockerfile, { OTHER: 'redis:7.4.6' }))).toEqual([
      'node:22.1.0-slim',
      'redis:7.4.6',
    ]);
  });

  test('deploy checks - compose substitution reports a variable .env does not define and honours defaults and $$', () => {
    const variables = parseDotEnv('# versions\nTAG=1.2.3\nEMPTY=\n');
    const result = interpolate(
      { image: 'x:${TAG}', a: '${MISSING}', b: '${EMPTY:-fallback}', c: '$${LITERAL}', d: '${NEEDED:?set NEEDED}' },
      variables,
    );
    expect(result.value).toEqual({ image: 'x:1.2.3', a: '', b: 'fallback', c: '${LITERAL}', d: '' });
    expect(result.unresolved).toEqual(['MISSING is not set', 'NEEDED: set NEEDED']);
    expect(() => parseDotEnv('not a pair')).toThrow(/expected KEY=VALUE/);
  });

  test('deploy checks - a reference to a ConfigMap key that does not exist is unresolved unless optional', () => {
    const container: Container = {
      name: 'x',
      image: 'x:1.0.0',
      ports: [],
      envFrom: [],
      env: [
        { name: 'NATS_URL', valueFrom: { configMapKeyRef: { name: 'config', key: 'NATS_URL', optional: false } } },
        { name: 'REDIS_URL', valueFrom: { configMapKeyRef: { name: 'config', key: 'REDIS_URL', optional: false } } },
        {
          name: 'OPENAI_API_KEY',
          valueFrom: { secretKeyRef: { name: 'secrets', key: 'OPENAI_API_KEY', optional: true } },
        },
      ],
    };
    const resolved = resolveContainerEnv(container, [
      validResource({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'config' },
        data: { NATS_URL: 'nats://nats:4222' },
      }),
    ]);
    expect(resolved.env).toEqual({ NATS_URL: 'nats://nats:4222' });
    expect(resolved.unresolved).toEqual(['REDIS_URL: ConfigMap config has no key REDIS_URL']);
  });

  test('deploy checks - PromQL syntax errors are reported, and selectors, matchers and groupings are read', () => {
    expect(analysePromql('sum(rate(x[5m]) /').errors).not.toEqual([]);
    const analysis = analysePromql(
      'max by (stream_name) (increase(jetstream_stream_last_seq{stream_name="S", role!="client"}[15m])) > 0',
    );
    expect(analysis.errors).toEqual([]);
    expect(analysis.selectors).toEqual([
      {
        metric: 'jetstream_stream_last_seq',
        matchers: [
          { label: 'stream_name', op: '=', value: 'S' },
          { label: 'role', op: '!=', value: 'client' },
        ],
      },
    ]);
    expect(analysis.groupings).toEqual([{ labels: ['stream_name'], metrics: ['jetstream_stream_last_seq'] }]);
  });

  test('deploy checks - .dockerignore exclusions cover folders, and a later ! re-includes', () => {
    const ignored = dockerIgnores('**/node_modules\ntest/**\n!test/package.json\n*.md\n');
    expect(ignored('packages/a/node_modules/x.js')).toBe(true);
    expect(ignored('test/deploy/a.test.ts')).toBe(true);
    expect(ignored('test/package.json')).toBe(false);
    expect(ignored('README.md')).toBe(true);
    expect(ignored('packages/models/prompts/extract.md')).toBe(false);
  });
});

const kubectl = requireTool('kubectl', hasKubectl(), 'apt-get install kubernetes-client');

describe('rendered manifests', () => {
  const folders: string[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });
  function kustomization(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'hopline-kustomize-'));
    folders.push(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  }
  const deployment = (env: string) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: { app: web }\n  template:\n    metadata:\n      labels: { app: web }\n    spec:\n      containers:\n        - name: web\n          image: hopline/web:1.0.0\n          env: ${env}\n`;

  test('manifests - an object that breaks its Kubernetes schema is reported with its kind, name and field', () => {
    const broken = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { spec: { containers: [{ image: 'hopline/web:1.0.0', ports: [{ containerPort: '80' }] }] } },
      },
    };
    expect(() => validResource(broken)).toThrow(/^Deployment web: .*containers\/0 must have required property name/);
    expect(() => validResource(broken)).toThrow(/containerPort must be integer/);
  });

  test('manifests - a kind without a schema here, or an apiVersion its schema is not, is refused', () => {
    expect(() => validResource({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'once' } })).toThrow(
      'Job once: no schema for kind Job',
    );
    expect(() =>
      validResource({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'x' } }),
    ).toThrow('apiVersion autoscaling/v1, expected autoscaling/v2');
  });

  test.skipIf(!kubectl)(
    'manifests - generated names carry a hash that kubectl rewrites in every reference, and Secret values are decoded',
    () => {
      const dir = kustomization({
        'deployment.yaml': deployment(
          '[{ name: NATS_URL, valueFrom: { configMapKeyRef: { name: config, key: NATS_URL } } }, { name: API_KEYS, valueFrom: { secretKeyRef: { name: secrets, key: API_KEYS } } }]',
        ),
        'keys.json': '{"keys":[]}',
        'kustomization.yaml': [
          'apiVersion: kustomize.config.k8s.io/v1beta1',
          'kind: Kustomization',
          'resources: [deployment.yaml]',
          'configMapGenerator: [{ name: config, literals: [NATS_URL=nats://nats:4222] }]',
          'secretGenerator: [{ name: secrets, files: [API_KEYS=keys.json] }]',
        ].join('\n'),
      });
      const resources = renderKustomization(dir);
      const [web] = ofKind(resources, 'Deployment');
      const container = web?.spec?.template.spec?.containers[0];
      expect(container?.env?.[0]?.valueFrom?.configMapKeyRef?.name).toMatch(/^config-[a-z0-9]{10}$/);
      expect(resolveContainerEnv(container ?? { name: 'web' }, resources)).toEqual({
        env: { NATS_URL: 'nats://nats:4222', API_KEYS: '{"keys":[]}' },
        unresolved: [],
      });
    },
  );
});
