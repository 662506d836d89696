// A hop-reasoner's question jobs as a process of its own, answering with the slow reasoner and
// storing traces in the bus's bucket: the process reasoner-failover.test.ts kills with SIGKILL or
// pauses with SIGSTOP mid-question. Prints "ready" once it takes questions, and its warnings.
// Arguments: the NATS url.
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
  traces: await bus.keyValue(),
  logger: createLogger('question-worker', { level: 'warn' }),
  metrics: createMetrics('question-worker', { defaultMetrics: false }),
  capacity: QUESTION_WORKER.capacity,
  leaseMs: QUESTION_WORKER.leaseMs,
  // A round's trace waits most of the lease (a third by default): the test that pauses this
  // process right after a round must land before it is stored, on a slow machine too.
  roundTraceDelayMs: QUESTION_WORKER.leaseMs - 500,
});
process.stdout.write('ready\n');
