// docker-compose.yml checked without a Docker engine: it parses, substitutes only what .env
// defines, and gives each of the five services exactly the environment its configSchema reads.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, posix } from 'node:path';
import { fabricLayout, writeFabric } from '@hopline/cli';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  containerEnvironment,
  loadCompose,
  mountTarget,
  parseDotEnv,
  publishedTargets,
  type ComposeService,
} from './support/compose.js';
import { baseImages, parseDockerfile, unpinnedReason } from './support/images.js';
import { loadServices, readRepoFile, repoRoot, type HoplineService } from './support/repo.js';
import { checkServiceEnvironment, hostAndPort } from './support/service-env.js';

const { file: compose, interpolation } = loadCompose(readRepoFile('docker-compose.yml'), readRepoFile('.env'));
let services: HoplineService[] = [];
// What `pnpm fabric:credentials` writes into deploy/fabric, which the stack mounts.
const fabric = mkdtempSync(join(tmpdir(), 'hopline-compose-fabric-'));

beforeAll(async () => {
  services = await loadServices();
  await writeFabric(fabric, { namespace: 'hopline' });
});

afterAll(() => rmSync(fabric, { recursive: true, force: true }));

function composeService(name: string): ComposeService {
  const service = compose.services[name];
  if (!service) throw new Error(`docker-compose.yml has no service ${name}`);
  return service;
}

/** A service's environment, checked against its schema; the configuration it would start with. */
function checked(service: HoplineService) {
  return checkServiceEnvironment(service, containerEnvironment(composeService(service.name)));
}

/** `QUERY_UNDERSTANDING_ADDRESS` → `query-understanding`, when that is a service. */
function addressedService(key: string): HoplineService | undefined {
  const match = /^(.+)_ADDRESS$/.exec(key);
  return match?.[1]
    ? services.find((service) => service.name === match[1]?.toLowerCase().replace(/_/g, '-'))
    : undefined;
}

describe('compose', () => {
  test('compose - every variable it substitutes comes from .env, and .env holds nothing it does not use', () => {
    expect(interpolation.unresolved).toEqual([]);
    const dotEnv = parseDotEnv(readRepoFile('.env'));
    const undefinedWithoutFallback = [...interpolation.used]
      .filter(([name, { hasDefault }]) => !hasDefault && !dotEnv.has(name))
      .map(([name]) => name);
    expect(undefinedWithoutFallback).toEqual([]);
    expect([...dotEnv.keys()].filter((name) => !interpolation.used.has(name))).toEqual([]);
  });

  test('compose - each service is a container built from the one Dockerfile for that service', () => {
    expect(services.length).toBeGreaterThan(0);
    for (const { name } of services) {
      const service = composeService(name);
      expect(service.build, name).toBeDefined();
      expect(service.build?.context, name).toBe('.');
      expect(service.build?.dockerfile ?? 'Dockerfile', name).toBe('Dockerfile');
      expect(service.build?.args.SERVICE, name).toBe(name);
      expect(service.image?.split(':')[0], name).toBe(`hopline/${name}`);
    }
  });

  test('compose - every container declares a health check', () => {
    const withoutHealthcheck = Object.entries(compose.services)
      .filter(([, service]) => {
        const probe = service.healthcheck;
        const testCommand = typeof probe?.test === 'string' ? [probe.test] : (probe?.test ?? []);
        return probe === undefined || probe.disable === true || testCommand.length === 0 || testCommand[0] === 'NONE';
      })
      .map(([name]) => name);
    expect(withoutHealthcheck).toEqual([]);
    // The services' check is the script the image carries.
    for (const { name } of services) {
      expect(composeService(name).healthcheck?.test, name).toContain('/app/healthcheck.mjs');
    }
    expect(existsSync(join(repoRoot, 'deploy/docker/healthcheck.mjs'))).toBe(true);
  });

  test('compose - a service sets no variable its configSchema does not read', () => {
    for (const service of services) expect(checked(service).unread, service.name).toEqual([]);
  });

  test('compose - a service gets every variable it needs in a container (required, loopback defaults, a fixed metrics port, its own service name, the trace endpoint)', () => {
    for (const service of services) expect(checked(service).missing, service.name).toEqual([]);
  });

  test("compose - each service's environment passes its configSchema", () => {
    for (const service of services) expect(checked(service).invalid, service.name).toEqual([]);
  });

  test('compose - an endpoint a service is given names a container of the stack, which it waits for to be healthy', () => {
    const problems: string[] = [];
    for (const service of services) {
      const composed = composeService(service.name);
      for (const [key, value] of Object.entries(containerEnvironment(composed))) {
        const target = hostAndPort(value);
        if (!target) continue;
        if (!compose.services[target.host])
          problems.push(`${service.name} ${key}=${value}: no container is named ${target.host}`);
        else if (composed.depends_on?.[target.host]?.condition !== 'service_healthy') {
          problems.push(`${service.name} ${key}=${value}: does not wait for ${target.host} to be healthy`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test('compose - a gRPC address points at the service that serves it, on the port that service listens on', () => {
    const problems: string[] = [];
    for (const service of services) {
      for (const [key, value] of Object.entries(containerEnvironment(composeService(service.name)))) {
        const server = addressedService(key);
        if (!server) continue;
        const target = hostAndPort(value);
        const listensOn = checked(server).config?.GRPC_PORT;
        if (target?.host !== server.name || target.port !== listensOn) {
          problems.push(
            `${service.name} ${key}=${value}, but ${server.name} listens on ${server.name}:${String(listensOn)}`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test('compose - a published port reaches a port the service is configured to listen on', () => {
    for (const service of services) {
      const config = checked(service).config ?? {};
      const listening = Object.entries(config)
        .filter(([key]) => key.endsWith('_PORT'))
        .map(([, port]) => port);
      for (const target of publishedTargets(composeService(service.name)))
        expect(listening, service.name).toContain(target);
    }
  });

  test('compose - secured by default: each NATS client has its own credentials file and the CA, each gRPC hop its certificate, all from the files pnpm fabric:credentials writes to its folder', () => {
    const problems: string[] = [];
    for (const service of services) {
      const config = checked(service).config ?? {};
      const folder = `./deploy/fabric/${service.name}`;
      const mounted = mountTarget(composeService(service.name), folder);
      const required = [
        ...('NATS_URL' in service.schema.shape ? ['NATS_CREDS', 'NATS_CA'] : []),
        ...('GRPC_TLS_CERT' in service.schema.shape ? ['GRPC_TLS_CA', 'GRPC_TLS_CERT', 'GRPC_TLS_KEY'] : []),
      ];
      for (const name of required) {
        const path = config[name];
        if (typeof path !== 'string') problems.push(`${service.name} sets no ${name}`);
        else if (mounted === undefined || posix.dirname(path) !== mounted)
          problems.push(`${service.name} ${name}=${path} is not in its mounted ${folder}`);
        else if (!existsSync(join(fabric, service.name, basename(path))))
          problems.push(`${service.name} ${name}=${path}: pnpm fabric:credentials writes no such file`);
      }
      // No other way to authenticate beside the credentials file.
      for (const name of ['NATS_NKEY', 'NATS_USER', 'NATS_TOKEN'])
        if (config[name] !== undefined) problems.push(`${service.name} sets ${name}`);
    }
    expect(problems).toEqual([]);
  });

  test('compose - NATS requires TLS and trusts only the operator pnpm fabric:credentials makes', () => {
    const conf = readRepoFile('deploy/compose/nats-server.conf');
    const mounted = mountTarget(composeService('nats'), './deploy/fabric/nats');
    expect(mountTarget(composeService('nats'), './deploy/compose/nats-server.conf')).toBe('/etc/nats/nats-server.conf');
    // An include is relative to the including file.
    expect(mounted).toBe('/etc/nats/fabric');
    expect(conf).toMatch(new RegExp(`^include \\./fabric/${basename(fabricLayout.natsOperatorConf)}$`, 'm'));
    expect(conf).not.toMatch(/^\s*(authorization|accounts)\b/m);
    const tls = /^tls \{([^}]*)\}/m.exec(conf)?.[1] ?? '';
    for (const [key, file] of [
      ['cert_file', fabricLayout.natsServerCert],
      ['key_file', fabricLayout.natsServerKey],
      ['ca_file', fabricLayout.natsCa],
    ] as const) {
      expect(tls, key).toMatch(new RegExp(`^\\s*${key}: /etc/nats/fabric/${basename(file)}$`, 'm'));
      expect(existsSync(join(fabric, file)), file).toBe(true);
    }
  });

  test('compose - retrieval-worker runs two replicas, which publish no host port and take no fixed container name', () => {
    const worker = composeService('retrieval-worker');
    expect(worker.deploy?.replicas).toBe(2);
    expect(worker.ports ?? []).toEqual([]);
    expect(worker.container_name).toBeUndefined();
  });

  test('compose - every image, and every base image it builds from, is pinned to an exact version', () => {
    const problems: string[] = [];
    for (const [name, service] of Object.entries(compose.services)) {
      if (!service.image) problems.push(`${name} names no image tag for what it runs or builds`);
      else {
        const reason = unpinnedReason(service.image);
        if (reason) problems.push(`${name}: ${reason}`);
      }
      if (service.build) {
        const dockerfile = join(service.build.context, service.build.dockerfile ?? 'Dockerfile');
        const args = Object.fromEntries(Object.entries(service.build.args).map(([key, value]) => [key, String(value)]));
        for (const image of baseImages(parseDockerfile(readRepoFile(dockerfile), args))) {
          const reason = unpinnedReason(image);
          if (reason) problems.push(`${name} builds from ${dockerfile}: ${reason}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
