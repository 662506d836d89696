import type { Bus, DurableStreamOptions } from '@hopline/bus';
import { jetstream, subjects } from '@hopline/contracts';
import { QuestionLog } from './question-log.js';
import { QuestionQueue } from './question-queue.js';

/**
 * The question jobs: a work queue, so that a job leaves the stream once a hop-reasoner finished
 * it. A job nobody took is long past its question's deadline when the events' limits drop it.
 */
export const questionJobsStream: DurableStreamOptions = {
  name: jetstream.questionStream,
  subjects: [subjects.askAll],
  workQueue: true,
  retention: 'events',
};

/** Every question's events, one subject per question, within the policy's limits for events. */
export const questionEventsStream: DurableStreamOptions = {
  name: jetstream.questionEventsStream,
  subjects: [subjects.eventsAll],
  retention: 'events',
};

export interface QuestionStreams {
  queue: QuestionQueue;
  log: QuestionLog;
}

/** Creates (or updates) both question streams on the bus's server. */
export async function openQuestionStreams(bus: Bus): Promise<QuestionStreams> {
  const [jobs, events] = await Promise.all([
    bus.durableStream(questionJobsStream),
    bus.durableStream(questionEventsStream),
  ]);
  return { queue: new QuestionQueue(jobs), log: new QuestionLog(events) };
}
