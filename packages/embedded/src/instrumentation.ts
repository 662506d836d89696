// Loaded with `node --import` before start.ts. The five services share this process but not
// a tracer provider: each has its own `service.name`, so a trace shows the same five services
// as in the distributed mode; spans of the embedded shell itself (the ops server) carry
// `hopline-embedded`.
import { bootTelemetry } from '@hopline/telemetry';

bootTelemetry('hopline-embedded', {
  services: ['answer-gateway', 'hop-reasoner', 'query-understanding', 'reranker', 'retrieval-worker'],
});
