import type { Bus, DurableStreamOptions } from '@hopline/bus';
import { jetstream, subjects } from '@hopline/contracts';
import { QuestionEnds } from './question-ends.js';
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

/**
 * Every question's events, one subject per question, within the policy's limits for events.
 * A gateway reads most of them (those of the questions it accepted), a question at a time:
 * its follows share one reading.
 */
export const questionEventsStream: DurableStreamOptions = {
  name: jetstream.questionEventsStream,
  subjects: [subjects.eventsAll],
  retention: 'events',
  sharedFollow: true,
};

/**
 * The gateways' requests to end questions, one subject per question, kept as long as events:
 * a request must still be there when a hop-reasoner takes the question's job late.
 */
export const questionEndsStream: DurableStreamOptions = {
  name: jetstream.questionEndsStream,
  subjects: [subjects.cancelAll],
  retention: 'events',
  // Every question a hop-reasoner runs follows its end requests, which are few and small: one
  // reading per process, which knows the few questions that have any.
  sharedFollow: true,
  subjectIndex: true,
};

export interface QuestionStreams {
  queue: QuestionQueue;
  log: QuestionLog;
  ends: QuestionEnds;
}

/** Creates (or updates) the question streams on the bus's server. */
export async function openQuestionStreams(bus: Bus): Promise<QuestionStreams> {
  const [jobs, events, ends] = await Promise.all([
    bus.durableStream(questionJobsStream),
    bus.durableStream(questionEventsStream),
    bus.durableStream(questionEndsStream),
  ]);
  return { queue: new QuestionQueue(jobs), log: new QuestionLog(events), ends: new QuestionEnds(ends) };
}
