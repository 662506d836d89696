// docker-compose.yml checked without a Docker engine: it parses, substitutes only what .env
// defines, and gives each of the five services exactly the environment its configSchema reads.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  containerEnvironment,
  loadCompose,
  parseDotEnv,
  publishedTargets,
  type ComposeService,
} from './support/compose.js';
import { baseImages, parseDockerfile, unpinnedReason } from './support/images.js';
import { loadServices, readRepoFile, repoRoot, type HoplineService } from './support/repo.js';
import { checkServiceEnvironment, hostAndPort } from './support/service-env.js';

const { file: compose, interpolation } = loadCompose(readRepoFile('docker-compose.yml'), readRepoFile('.env'));
let services: HoplineService[] = [];

beforeAll(async () => {
  services = await loadServices();
});

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
