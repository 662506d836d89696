export * from './bus.js';
export { withTracing } from './tracing.js';
export { busHealth } from './health.js';
export {
  DEFAULT_JETSTREAM_POLICY,
  jetStreamPolicyFrom,
  limitsOf,
  type JetStreamEnv,
  type JetStreamPolicy,
  type RetentionClass,
  type RetentionLimits,
} from './jetstream-policy.js';
export { connectNatsBus, type NatsBusOptions } from './nats/nats-bus.js';
export { natsSecurityFrom, type NatsSecurity, type NatsSecurityEnv } from './nats/security.js';
export {
  createMemoryBroker,
  createMemoryBus,
  type MemoryBroker,
  type MemoryBrokerOptions,
  type MemoryBusOptions,
} from './memory/memory-bus.js';
export { createFileKeyValueStore } from './file-kv.js';
export { reportToStderr } from './report.js';
