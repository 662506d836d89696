// A hop-reasoner's question jobs as a process of its own, answering with the slow reasoner: the
// process reasoner-failover.test.ts kills with SIGKILL mid-question. Prints "ready" once it
// takes questions. Arguments: the NATS url.
import { connectNatsBus } from '@hopline/bus';
import { startQuestionJobs } from '@hopline/hop-reasoner';
import { openQuestionStreams } from '@hopline/questions';
import { createLogger, createMetrics } from '@hopline/telemetry';
import { QUESTION_WORKER } from './question-worker-settings.js';
import { slowReasoner } from './slow-reasoner.js';

const bus = await connectNatsBus({ url: process.argv[2] ?? '', name: 'question-worker' });
await startQuestionJobs({
  ...(await openQuestionStreams(bus)),
  reasoner: slowReasoner(QUESTION_WORKER.reasoner),
  traces: { put: async () => undefined, get: async () => undefined },
  logger: createLogger('question-worker', { level: 'silent' }),
  metrics: createMetrics('question-worker', { defaultMetrics: false }),
  capacity: QUESTION_WORKER.capacity,
  leaseMs: QUESTION_WORKER.leaseMs,
});
process.stdout.write('ready\n');
