// deploy/kubernetes checked without a cluster: the kustomize base and the example overlay are
// rendered by kubectl's own kustomize, every object is validated against its Kubernetes schema
// (kubernetes-models), and each Deployment is held against its service's configSchema, its
// probes and its Service; the chart values are checked for what Hopline needs.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { addApiKey } from '@hopline/answer-gateway';
import { fabricLayout, writeFabric } from '@hopline/cli';
import { natsClients } from '@hopline/contracts';
import { parse, parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { requireTool } from '../gateway/support.js';
import { parseDotEnv } from './support/compose.js';
import { unpinnedReason } from './support/images.js';
import { containerPortNumber, resolveContainerEnv, selects, type Container, type Probe } from './support/kubernetes.js';
import { hasKubectl, ofKind, renderKustomization, type Resource, type ResourceOf } from './support/kustomize.js';
import { listRepoFiles, loadServices, readRepoFile, repoRoot, type HoplineService } from './support/repo.js';
import { checkServiceEnvironment, hostAndPort } from './support/service-env.js';

const BASE = 'deploy/kubernetes/base';
const OVERLAY = 'deploy/kubernetes/overlays/example';

const enabled = requireTool('kubectl', hasKubectl(), 'apt-get install kubernetes-client');
let services: HoplineService[] = [];
const rendered: Record<string, Resource[]> = {};
const copy = mkdtempSync(join(tmpdir(), 'hopline-kubernetes-'));
// What `pnpm fabric:credentials` writes when deploying: the Secrets and the NATS chart's second values file.
const fabric = join(copy, 'fabric');

beforeAll(async () => {
  services = await loadServices();
  await writeFabric(fabric, { namespace: 'hopline' });
  if (!enabled) return;
  // The overlay's key file is made at deploy time, as an operator would make it.
  cpSync(join(repoRoot, 'deploy/kubernetes'), join(copy, 'deploy/kubernetes'), { recursive: true });
  addApiKey(join(copy, OVERLAY, 'api-keys.json'), {
    tenantId: 'demo',
    userId: 'ops',
    kbIds: ['demo'],
    canIngest: true,
  });
  rendered[BASE] = renderKustomization(join(copy, BASE));
  rendered[OVERLAY] = renderKustomization(join(copy, OVERLAY));
});

afterAll(() => rmSync(copy, { recursive: true, force: true }));

const resourcesOf = (tree: string): Resource[] => rendered[tree] ?? [];
const nameOf = (resource: { metadata?: { name?: string } }): string => resource.metadata?.name ?? '';
const podLabelsOf = (deployment: ResourceOf<'Deployment'>) => deployment.spec?.template.metadata?.labels ?? {};
const containersOf = (deployment: ResourceOf<'Deployment'>) => deployment.spec?.template.spec?.containers ?? [];

function deploymentOf(tree: string, name: string): ResourceOf<'Deployment'> {
  const deployment = ofKind(resourcesOf(tree), 'Deployment').find((candidate) => nameOf(candidate) === name);
  if (!deployment) throw new Error(`${tree} has no Deployment ${name}`);
  return deployment;
}

function containerOf(tree: string, name: string): Container {
  const container = containersOf(deploymentOf(tree, name)).find((candidate) => candidate.name === name);
  if (!container) throw new Error(`${tree}: Deployment ${name} has no container named ${name}`);
  return container;
}

/** The names a container sets, whether or not an optional reference resolves. */
function declaredNames(tree: string, container: Container): string[] {
  const fromEnvFrom = Object.keys(resolveContainerEnv({ ...container, env: [] }, resourcesOf(tree)).env);
  return [...(container.env ?? []).map((variable) => variable.name), ...fromEnvFrom];
}

/** The service's configuration as the example overlay starts it. */
function overlayConfig(service: HoplineService): Record<string, unknown> {
  const { env } = resolveContainerEnv(containerOf(OVERLAY, service.name), resourcesOf(OVERLAY));
  const report = checkServiceEnvironment(service, env);
  if (!report.config) throw new Error(`${service.name}: ${report.invalid.join('; ')}`);
  return report.config;
}

/** What a probe reaches: `grpc:<port>` or `http:<port><path>`. */
function probeTarget(container: Container, probe: Probe | undefined): string | undefined {
  if (probe?.grpc) return `grpc:${probe.grpc.port}`;
  if (probe?.httpGet) return `http:${String(containerPortNumber(container, probe.httpGet.port))}${probe.httpGet.path}`;
  return undefined;
}

describe('deploy files', () => {
  test('kubernetes - every YAML and JSON file under deploy/ parses', () => {
    const files = listRepoFiles('deploy', (path) => /\.(ya?ml|json)$/.test(path));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      if (file.endsWith('.json')) expect(() => JSON.parse(readRepoFile(file)) as unknown, file).not.toThrow();
      else
        expect(
          parseAllDocuments(readRepoFile(file)).flatMap((document) => document.errors.map((error) => error.message)),
          file,
        ).toEqual([]);
    }
  });

  test('kubernetes - the example overlay ships no API key: its key file is made at deploy time and git ignores it', () => {
    const keyFile = `${OVERLAY}/api-keys.json`;
    expect(execFileSync('git', ['ls-files', 'deploy/kubernetes'], { cwd: repoRoot, encoding: 'utf8' })).not.toContain(
      'api-keys',
    );
    expect(execFileSync('git', ['check-ignore', keyFile], { cwd: repoRoot, encoding: 'utf8' }).trim()).toBe(keyFile);
  });
});

describe.skipIf(!enabled)('kubernetes', () => {
  test('kubernetes - the example overlay renders into one namespace', () => {
    const namespaces = new Set(
      resourcesOf(OVERLAY)
        .filter((resource) => resource.kind !== 'Namespace')
        .map((resource) => resource.metadata?.namespace),
    );
    expect([...namespaces]).toEqual(['hopline']);
  });

  test.each([BASE, OVERLAY])(
    'kubernetes - %s has one Deployment and one Service per service, the Service selecting its pods on named container ports',
    (tree) => {
      const deployments = ofKind(resourcesOf(tree), 'Deployment');
      const kubeServices = ofKind(resourcesOf(tree), 'Service');
      expect(deployments.map(nameOf).sort()).toEqual(services.map((service) => service.name));
      for (const deployment of deployments) {
        const name = nameOf(deployment);
        const podLabels = podLabelsOf(deployment);
        expect(selects(deployment.spec?.selector.matchLabels ?? {}, podLabels), `${name} selector`).toBe(true);
        const service = kubeServices.find((candidate) => nameOf(candidate) === name);
        expect(service, `Service ${name}`).toBeDefined();
        expect(selects(service?.spec?.selector ?? {}, podLabels), `Service ${name} selects the pods`).toBe(true);
        const container = containerOf(tree, name);
        for (const port of service?.spec?.ports ?? []) {
          expect(
            containerPortNumber(container, port.targetPort ?? port.port),
            `Service ${name} port ${port.name ?? port.port}`,
          ).toBeDefined();
        }
      }
    },
  );

  test('kubernetes - probes: start-up and readiness on gRPC health for plaintext gRPC servers, otherwise HTTP /readyz on METRICS_PORT; liveness on /livez for every service', () => {
    const problems: string[] = [];
    for (const service of services) {
      const container = containerOf(OVERLAY, service.name);
      const config = overlayConfig(service);
      // The kubelet's gRPC probe speaks plaintext only: a server with mutual TLS is probed over HTTP.
      const grpcProbed = 'GRPC_PORT' in service.schema.shape && config.GRPC_TLS_CERT === undefined;
      // Liveness must not follow readiness: a NATS outage makes every service unready, and a
      // liveness probe on readiness (gRPC health says NOT_SERVING then) would restart the whole
      // fleet for it.
      const expected = (path: '/readyz' | '/livez') =>
        grpcProbed && path === '/readyz'
          ? `grpc:${String(config.GRPC_PORT)}`
          : `http:${String(config.METRICS_PORT)}${path}`;
      for (const [kind, path] of [
        ['readinessProbe', '/readyz'],
        ['livenessProbe', '/livez'],
      ] as const) {
        const target = probeTarget(container, container[kind]);
        if (target !== expected(path))
          problems.push(`${service.name} ${kind} reaches ${target ?? 'nothing'}, expected ${expected(path)}`);
      }
      const startup = probeTarget(container, container.startupProbe);
      if (startup !== undefined && startup !== expected('/readyz'))
        problems.push(`${service.name} startupProbe reaches ${startup}, expected ${expected('/readyz')}`);
      if (
        config.METRICS_PORT !== undefined &&
        !(container.ports ?? []).some((port) => port.containerPort === config.METRICS_PORT)
      ) {
        problems.push(`${service.name} does not declare its metrics port ${String(config.METRICS_PORT)}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('kubernetes - network policies: a gRPC server admits only the hop-reasoners, NATS only the services that hold a NATS user and the nats-box', () => {
    const policies = ofKind(resourcesOf(OVERLAY), 'NetworkPolicy');
    /** The app names whose pods a policy lets reach `port` of the pods of `app`. */
    const admitted = (app: string, port: string | number): string[] | 'anyone' => {
      const policy = policies.find(
        (candidate) => candidate.spec?.podSelector.matchLabels?.['app.kubernetes.io/name'] === app,
      );
      if (!policy) throw new Error(`no NetworkPolicy selects ${app}`);
      const rules = (policy.spec?.ingress ?? []).filter((rule) => (rule.ports ?? []).some((p) => p.port === port));
      if (rules.some((rule) => rule.from === undefined)) return 'anyone';
      return rules
        .flatMap((rule) => rule.from ?? [])
        .map((peer) => {
          const labels = peer.podSelector?.matchLabels ?? {};
          const component = labels['app.kubernetes.io/component'];
          return `${labels['app.kubernetes.io/name'] ?? '?'}${component ? `/${component}` : ''}`;
        })
        .sort();
    };
    expect(admitted('query-understanding', 'grpc')).toEqual(['hop-reasoner']);
    expect(admitted('reranker', 'grpc')).toEqual(['hop-reasoner']);
    // The NATS chart's nats-box pod: the operators' shell, connecting as operator-inspect.
    expect(admitted('nats', 4222)).toEqual([...natsClients, 'nats/nats-box'].sort());
    // Every Hopline pod is selected by a policy, so none is open by default.
    for (const service of services) expect(() => admitted(service.name, 'metrics')).not.toThrow();
  });

  test('kubernetes - each service reads its NATS credentials file and certificates from its own fabric Secret, as pnpm fabric:credentials writes it', () => {
    const secrets = new Map(
      parseAllDocuments(readFileSync(join(fabric, fabricLayout.kubernetesSecrets), 'utf8')).map((document) => {
        const secret = document.toJS() as { metadata: { name: string }; data: Record<string, string> };
        return [secret.metadata.name, Object.keys(secret.data)] as const;
      }),
    );
    for (const service of services) {
      const deployment = deploymentOf(OVERLAY, service.name);
      const container = containerOf(OVERLAY, service.name);
      const mount = (container.volumeMounts ?? []).find((candidate) => candidate.name === 'fabric');
      const volume = (deployment.spec?.template.spec?.volumes ?? []).find((candidate) => candidate.name === 'fabric');
      expect(volume?.secret?.secretName, service.name).toBe(fabricLayout.serviceSecret(service.name));
      const config = overlayConfig(service);
      const files = ['NATS_CREDS', 'NATS_CA', 'GRPC_TLS_CA', 'GRPC_TLS_CERT', 'GRPC_TLS_KEY']
        .map((name) => config[name])
        .filter((value): value is string => typeof value === 'string');
      // TLS on the shipped deployment: every NATS client has its credentials file and the CA, and
      // no other way to authenticate; gRPC hops have certificates.
      if ('NATS_URL' in service.schema.shape) expect(config.NATS_CREDS && config.NATS_CA, service.name).toBeTruthy();
      for (const name of ['NATS_NKEY', 'NATS_USER', 'NATS_TOKEN']) expect(config[name], service.name).toBeUndefined();
      if ('GRPC_TLS_CERT' in service.schema.shape) expect(config.GRPC_TLS_CERT, service.name).toBeTruthy();
      for (const path of files) {
        expect(posix.dirname(path), `${service.name}: ${path}`).toBe(mount?.mountPath ?? '?');
        // The key the Secret volume turns into that file.
        expect(secrets.get(fabricLayout.serviceSecret(service.name)), `${service.name}: ${path}`).toContain(
          posix.basename(path),
        );
      }
    }
    // The NATS chart's certificate Secret, with the CA the services check it against.
    expect(secrets.get(fabricLayout.natsTlsSecret)).toEqual(expect.arrayContaining(['tls.crt', 'tls.key', 'ca.crt']));
    // The nats-box's credentials, which the second values file names for its context.
    expect(secrets.get(fabricLayout.natsBoxSecret)).toEqual(['nats.creds']);
  });

  test.each([BASE, OVERLAY])('kubernetes - %s: a container sets no variable its configSchema does not read', (tree) => {
    for (const service of services) {
      const keys = new Set(Object.keys(service.schema.shape));
      expect(
        declaredNames(tree, containerOf(tree, service.name)).filter((name) => !keys.has(name)),
        service.name,
      ).toEqual([]);
    }
  });

  test('kubernetes - in the example overlay every ConfigMap and Secret key a container needs exists', () => {
    for (const service of services) {
      expect(
        resolveContainerEnv(containerOf(OVERLAY, service.name), resourcesOf(OVERLAY)).unresolved,
        service.name,
      ).toEqual([]);
    }
  });

  test('kubernetes - in the example overlay a container gets every variable it needs, and its environment passes its configSchema', () => {
    for (const service of services) {
      const { env } = resolveContainerEnv(containerOf(OVERLAY, service.name), resourcesOf(OVERLAY));
      const report = checkServiceEnvironment(service, env);
      expect(report.missing, `${service.name} missing`).toEqual([]);
      expect(report.invalid, `${service.name} invalid`).toEqual([]);
    }
  });

  test('kubernetes - a gRPC address names the Service of the server that serves it, on the port that server listens on', () => {
    const problems: string[] = [];
    for (const service of services) {
      for (const [key, value] of Object.entries(overlayConfig(service))) {
        const server = services.find(
          (candidate) => `${candidate.name.toUpperCase().replace(/-/g, '_')}_ADDRESS` === key,
        );
        if (!server || typeof value !== 'string') continue;
        const target = hostAndPort(value);
        const listensOn = overlayConfig(server).GRPC_PORT;
        if (target?.host.split('.')[0] !== server.name || target.port !== listensOn) {
          problems.push(
            `${service.name} ${key}=${value}, but ${server.name} listens on ${server.name}:${String(listensOn)}`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test('kubernetes - retrieval-worker and reranker scale horizontally on CPU, and their Deployments leave the replica count to the autoscaler', () => {
    const autoscalers = ofKind(resourcesOf(OVERLAY), 'HorizontalPodAutoscaler');
    for (const name of ['retrieval-worker', 'reranker']) {
      const autoscaler = autoscalers.find(
        (candidate) =>
          candidate.spec?.scaleTargetRef.kind === 'Deployment' && candidate.spec.scaleTargetRef.name === name,
      );
      expect(autoscaler, `HorizontalPodAutoscaler for ${name}`).toBeDefined();
      expect(autoscaler?.spec?.minReplicas, name).toBeGreaterThanOrEqual(2);
      expect(autoscaler?.spec?.maxReplicas, name).toBeGreaterThan(autoscaler?.spec?.minReplicas ?? 0);
      expect(
        autoscaler?.spec?.metrics?.some((metric) => metric.resource?.name === 'cpu'),
        name,
      ).toBe(true);
      expect(deploymentOf(OVERLAY, name).spec?.replicas, `${name} replicas`).toBeUndefined();
      // Utilization targets are a share of the request: without one the autoscaler cannot act.
      expect(containerOf(OVERLAY, name).resources?.requests?.cpu, `${name} cpu request`).toBeDefined();
    }
  });

  test('kubernetes - every Deployment has a disruption budget that never blocks a node drain outright', () => {
    const budgets = ofKind(resourcesOf(OVERLAY), 'PodDisruptionBudget');
    const autoscalers = ofKind(resourcesOf(OVERLAY), 'HorizontalPodAutoscaler');
    for (const deployment of ofKind(resourcesOf(OVERLAY), 'Deployment')) {
      const name = nameOf(deployment);
      const matching = budgets.filter((budget) =>
        selects(budget.spec?.selector?.matchLabels ?? {}, podLabelsOf(deployment)),
      );
      expect(matching.length, `budgets for ${name}`).toBe(1);
      const budget = matching[0];
      const fewestReplicas =
        autoscalers.find((hpa) => hpa.spec?.scaleTargetRef.name === name)?.spec?.minReplicas ??
        deployment.spec?.replicas ??
        1;
      if (budget?.spec?.maxUnavailable !== undefined) expect(budget.spec.maxUnavailable, name).not.toBe(0);
      else expect(Number(budget?.spec?.minAvailable), name).toBeLessThan(fewestReplicas);
    }
  });

  test('kubernetes - a pod a Service routes requests to keeps serving a few seconds past its termination (preStop), and its shutdown still fits its grace period', () => {
    // stopOnSignals' own limit on a shutdown before the process exits anyway (the gateway's is
    // SHUTDOWN_GRACE_MS + 5 s).
    const shutdownLimitSeconds = (name: string) =>
      name === 'answer-gateway'
        ? Number(overlayConfig(services.find((service) => service.name === name) as HoplineService).SHUTDOWN_GRACE_MS) /
            1000 +
          5
        : 15;
    const routed = ofKind(resourcesOf(OVERLAY), 'Service').filter((service) =>
      (service.spec?.ports ?? []).some((port) => port.name !== 'metrics'),
    );
    expect(routed.map(nameOf).sort()).toEqual(['answer-gateway', 'query-understanding', 'reranker']);
    for (const service of routed) {
      const name = nameOf(service);
      const command = containerOf(OVERLAY, name).lifecycle?.preStop?.exec?.command ?? [];
      expect(command[0], name).toBe('sleep');
      const waitSeconds = Number(command[1]);
      expect(waitSeconds, name).toBeGreaterThanOrEqual(1);
      const grace = deploymentOf(OVERLAY, name).spec?.template.spec?.terminationGracePeriodSeconds ?? 30;
      expect(waitSeconds + shutdownLimitSeconds(name), name).toBeLessThanOrEqual(grace);
    }
  });

  test('kubernetes - pods run as a non-root user without privilege escalation', () => {
    for (const deployment of ofKind(resourcesOf(OVERLAY), 'Deployment')) {
      expect(deployment.spec?.template.spec?.securityContext?.runAsNonRoot, nameOf(deployment)).toBe(true);
      for (const container of containersOf(deployment)) {
        expect(container.securityContext?.allowPrivilegeEscalation, `${nameOf(deployment)}/${container.name}`).toBe(
          false,
        );
      }
    }
  });

  test.each([BASE, OVERLAY])('kubernetes - %s: every image is pinned to an exact version of its service', (tree) => {
    for (const deployment of ofKind(resourcesOf(tree), 'Deployment')) {
      for (const { image = '' } of containersOf(deployment)) {
        expect(unpinnedReason(image), image).toBeUndefined();
        expect(image.split(':')[0]?.endsWith(`hopline/${nameOf(deployment)}`), image).toBe(true);
      }
    }
  });

  test("kubernetes - the base deploys each service at its package's version, the tag compose builds", () => {
    const composeVersion = parseDotEnv(readRepoFile('.env')).get('HOPLINE_VERSION');
    for (const service of services) {
      const { version } = z
        .object({ version: z.string() })
        .parse(JSON.parse(readRepoFile(`services/${service.name}/package.json`)));
      expect(containerOf(BASE, service.name).image, service.name).toBe(`hopline/${service.name}:${version}`);
      expect(composeVersion, service.name).toBe(version);
    }
  });

  test('kubernetes - the shared ConfigMap holds only variables some service reads', () => {
    const read = new Set(services.flatMap((service) => Object.keys(service.schema.shape)));
    for (const object of ofKind(resourcesOf(OVERLAY), 'ConfigMap')) {
      expect(
        Object.keys(object.data ?? {}).filter((key) => !read.has(key)),
        nameOf(object),
      ).toEqual([]);
    }
  });
});

describe('charts', () => {
  const values = (file: string): Record<string, unknown> =>
    parse(readRepoFile(`deploy/charts/${file}`)) as Record<string, unknown>;
  const at = (object: unknown, path: string): unknown =>
    path
      .split('.')
      .reduce<unknown>(
        (node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
        object,
      );

  test('charts - NATS runs JetStream on replicated file storage with its monitoring port', () => {
    const nats = values('nats.values.yaml');
    expect(at(nats, 'config.jetstream.enabled')).toBe(true);
    expect(at(nats, 'config.jetstream.fileStore.enabled')).toBe(true);
    expect(at(nats, 'config.cluster.replicas')).toBeGreaterThanOrEqual(3);
    expect(at(nats, 'config.monitor.enabled')).toBe(true);
    expect(at(nats, 'promExporter.enabled')).toBe(true);
  });

  test('charts - NATS clients connect over TLS, with the certificate pnpm fabric:credentials writes', () => {
    const nats = values('nats.values.yaml');
    expect(at(nats, 'config.nats.tls.enabled')).toBe(true);
    expect(at(nats, 'config.nats.tls.secretName')).toBe(fabricLayout.natsTlsSecret);
    expect(at(nats, 'tlsCA.secretName')).toBe(fabricLayout.natsTlsSecret);
  });

  test('charts - the second values file pnpm fabric:credentials writes puts NATS in operator mode: the operator, its accounts, a control line for their JWTs, no password users', () => {
    // fabric-shared-users.test.ts starts a real server from the same settings.
    const generated = parse(readFileSync(join(fabric, fabricLayout.chartValues), 'utf8')) as unknown;
    const merged = at(generated, 'config.merge') as Record<string, unknown>;
    expect(Object.keys(merged).sort()).toEqual([
      'max_control_line',
      'operator',
      'resolver',
      'resolver_preload',
      'system_account',
    ]);
    expect(merged.resolver).toBe('MEMORY');
    expect(Object.keys(merged.resolver_preload as object)).toContain(merged.system_account);
    expect(at(values('nats.values.yaml'), 'config.merge')).toBeUndefined();
    // The nats-box's context: operator-inspect's credentials, and the inbox prefix that user may read.
    expect(at(generated, 'natsBox.contexts.default')).toEqual({
      creds: { secretName: fabricLayout.natsBoxSecret, key: 'nats.creds' },
      merge: { inbox_prefix: '_INBOX.operator-inspect' },
    });
    expect(at(values('nats.values.yaml'), 'tlsCA.enabled')).toBe(true);
  });

  test.skipIf(!enabled)(
    'charts - the collector receives OTLP where the services export it and sends traces to an exporter it defines',
    () => {
      const collector = values('opentelemetry-collector.values.yaml');
      const { env } = resolveContainerEnv(containerOf(BASE, 'answer-gateway'), resourcesOf(BASE));
      const endpoint = hostAndPort(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '');
      expect(endpoint?.host).toBe(at(collector, 'fullnameOverride'));
      const protocol = env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
      expect(endpoint?.port).toBe(protocol === 'grpc' ? 4317 : 4318);
      expect(at(collector, `config.receivers.otlp.protocols.${protocol === 'grpc' ? 'grpc' : 'http'}`)).toBeDefined();
      const pipeline = at(collector, 'config.service.pipelines.traces') as
        { receivers?: string[]; exporters?: string[] } | undefined;
      expect(pipeline?.receivers).toContain('otlp');
      expect(pipeline?.exporters?.length).toBeGreaterThan(0);
      for (const exporter of pipeline?.exporters ?? [])
        expect(at(collector, `config.exporters`), exporter).toHaveProperty([exporter]);
    },
  );

  test('charts - every image the values files name is pinned to an exact version', () => {
    const images = [
      ['nats', 'container.image'],
      ['nats', 'promExporter.image'],
      ['jaeger', 'allInOne.image'],
    ].map(([chart, path]) => {
      const image = at(values(`${chart}.values.yaml`), path ?? '') as { repository?: string; tag?: string } | undefined;
      return `${image?.repository ?? '?'}:${image?.tag ?? ''}`;
    });
    expect(images.map(unpinnedReason).filter(Boolean)).toEqual([]);
  });
});
