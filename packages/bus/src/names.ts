import { ValidationError } from '@hopline/contracts';
import type { ServiceDefinition } from './bus.js';

// The NATS services protocol and JetStream accept these names; both adapters check them up front.
const NAME = /^[-\w]+$/;
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-.]+)?(?:\+[0-9A-Za-z-.]+)?$/;
const KV_KEY = /^[-/=.\w]+$/;
// Keys become file names in the file-backed store.
const MAX_KEY_LENGTH = 200;

export function assertValidName(value: string, what: string): void {
  if (!NAME.test(value)) throw new ValidationError(`invalid ${what} "${value}": use letters, digits, "-" or "_"`);
}

export function assertValidServiceDefinition(definition: ServiceDefinition): void {
  assertValidName(definition.name, 'service name');
  if (!SEMVER.test(definition.version)) {
    throw new ValidationError(
      `invalid version "${definition.version}" of service ${definition.name}: it must be a semantic version`,
    );
  }
  for (const endpoint of definition.endpoints) {
    assertValidName(endpoint.name, 'endpoint name');
    if (endpoint.queue !== undefined) assertValidName(endpoint.queue, 'queue group');
  }
}

export function assertValidKey(key: string): void {
  if (!KV_KEY.test(key) || key.startsWith('.') || key.endsWith('.') || key.length > MAX_KEY_LENGTH) {
    throw new ValidationError(
      `invalid key "${key}": up to ${MAX_KEY_LENGTH} letters, digits or "-/_=.", not starting or ending with "."`,
    );
  }
}
