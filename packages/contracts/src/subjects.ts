import { ValidationError } from './errors.js';

// Question ids, tenant ids and kb ids become subject tokens: anything but these characters
// could add a token or a wildcard and reach another question's or tenant's subject.
const TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

export function subjectToken(value: string, what: string): string {
  if (!TOKEN.test(value)) {
    throw new ValidationError(`${what} must be 1-128 characters of letters, digits, "_" or "-"`);
  }
  return value;
}

/** Every NATS subject Hopline uses. Services never write a subject literal of their own. */
export const subjects = {
  /** AskCommand of one question: its job in the work-queue stream, gateway → one hop-reasoner. */
  ask: (questionId: string) => `hopline.qa.${subjectToken(questionId, 'question id')}.ask`,
  askAll: 'hopline.qa.*.ask',
  /** QaEvent log of one question in the events stream: hop-reasoners → gateways. */
  events: (questionId: string) => `hopline.qa.${subjectToken(questionId, 'question id')}.events`,
  eventsAll: 'hopline.qa.*.events',
  /**
   * CancelCommand of one question in the ends stream: a gateway's request that it end, for
   * the hop-reasoner holding its job or taking it next, which writes the end into the log.
   */
  cancel: (questionId: string) => `hopline.qa.${subjectToken(questionId, 'question id')}.cancel`,
  cancelAll: 'hopline.qa.*.cancel',
  /**
   * Empty pings from a gateway streaming a question it did not accept (a resume through another
   * replica) to the gateway that did: someone still reads it, so it is not cancelled as abandoned.
   */
  readers: (questionId: string) => `hopline.qa.${subjectToken(questionId, 'question id')}.readers`,
  readersAll: 'hopline.qa.*.readers',
  /** RetrieveRequest → RetrieveResponse, served by the retrieval-worker queue group. */
  retrieve: 'hopline.retrieve',
  /** The same, served by one retrieval worker alone: where a hedged or retried retrieval goes. */
  retrieveAt: (workerId: string) => `hopline.retrieve.worker.${subjectToken(workerId, 'worker id')}`,
  /** WorkerPresence, published every second by each retrieval worker that is ready. */
  retrievalPresence: 'hopline.retrieve.presence',
  /** DocumentLookup → DocumentState, served by the retrieval-worker queue group. */
  documentLookup: 'hopline.kb.lookup',
  /** KbStatsRequest → KbStatsResponse, served by the retrieval-worker queue group. */
  kbStats: 'hopline.kb.stats',
  /** IngestCommand into the durable ingest stream. */
  ingest: (tenantId: string, kbId: string) =>
    `hopline.kb.${subjectToken(tenantId, 'tenant id')}.${subjectToken(kbId, 'kb id')}.ingest`,
  ingestAll: 'hopline.kb.*.*.ingest',
  /** The parts of one document body too large for one message (see Document.body_id). */
  documentBody: (tenantId: string, kbId: string, bodyId: string) =>
    `hopline.kb.${subjectToken(tenantId, 'tenant id')}.${subjectToken(kbId, 'kb id')}.body.${subjectToken(bodyId, 'body id')}`,
  documentBodyAll: 'hopline.kb.*.*.body.*',
  /** DeadLetter for ingest commands that failed permanently. */
  deadLetter: 'hopline.kb.deadletter',
  /** KbChanged after a worker applied an ingest command. */
  kbChanged: (tenantId: string, kbId: string) =>
    `hopline.kb.${subjectToken(tenantId, 'tenant id')}.${subjectToken(kbId, 'kb id')}.changed`,
  kbChangedAll: 'hopline.kb.*.*.changed',
} as const;

/** The question a readers ping (a subject of `subjects.readersAll`) is for; undefined for any other subject. */
export const questionOfReaders = (subject: string): string | undefined =>
  /^hopline\.qa\.([^.]+)\.readers$/.exec(subject)?.[1];

/**
 * The subject with its per-question or per-kb tokens replaced by placeholders: span names
 * and metric labels use it so that they do not grow with every question.
 */
export function subjectTemplate(subject: string): string {
  const parts = subject.split('.');
  if (parts[0] !== 'hopline') return subject;
  if (parts[1] === 'qa' && parts.length === 4) return `hopline.qa.{question}.${parts[3]}`;
  if (parts[1] === 'kb' && parts.length === 5) return `hopline.kb.{tenant}.{kb}.${parts[4]}`;
  if (parts[1] === 'kb' && parts[4] === 'body' && parts.length === 6) return 'hopline.kb.{tenant}.{kb}.body.{body}';
  if (parts[1] === 'retrieve' && parts[2] === 'worker' && parts.length === 4) return 'hopline.retrieve.worker.{worker}';
  return subject;
}

/**
 * The Nats-Msg-Id of an ingest command. One stream carries every tenant's commands and drops a
 * repeated id, so the id names the tenant and kb as well as the document, operation and version:
 * two tenants ingesting "readme" version 1 must not cancel each other out. Its parts are
 * separated by "/", which no tenant, kb or document id contains, and the operation comes first:
 * the upsert of a document named "x:delete" and the delete of "x" cannot share an id.
 */
export function ingestMessageId(
  op: 'upsert' | 'delete',
  tenantId: string,
  kbId: string,
  docId: string,
  version: number,
): string {
  return `${op}/${tenantId}/${kbId}/${docId}/${version}`;
}

export const queueGroups = {
  retrievalWorker: 'retrieval-worker',
} as const;

/** JetStream resources. */
export const jetstream = {
  ingestStream: 'HOPLINE_INGEST',
  /**
   * Bodies of documents too large for one message, kept as long as the ingest stream keeps the
   * commands naming them: a worker replaying the stream reads them again. A stream of its own,
   * so that parts of an upload whose command never came cannot hold a worker's catch-up back.
   */
  documentBodyStream: 'HOPLINE_DOCUMENT_BODIES',
  deadLetterStream: 'HOPLINE_DEADLETTER',
  ingestConsumer: 'retrieval-worker',
  traceBucket: 'hopline_traces',
  /** The knowledge bases tenants created (KbRecord by "<tenant>.<kb>"); kept without limits. */
  kbBucket: 'hopline_kbs',
  /** The operators' controls of the reasoning (OperatorControls under `controlsKey`), watched by every hop-reasoner. */
  controlsBucket: 'hopline_controls',
  controlsKey: 'reasoning',
  /** Work queue of question jobs (AskCommand), one message per question. */
  questionStream: 'HOPLINE_QUESTIONS',
  /** The hop-reasoners' one durable consumer of the question jobs. */
  questionConsumer: 'hop-reasoner',
  /** Every question's events (QaEvent), one subject per question. */
  questionEventsStream: 'HOPLINE_QUESTION_EVENTS',
  /** The gateways' requests to end questions (CancelCommand), one subject per question. */
  questionEndsStream: 'HOPLINE_QUESTION_ENDS',
} as const;

/** NATS micro-service names, answered on $SRV.PING / $SRV.INFO / $SRV.STATS. */
export const natsServices = {
  retrievalWorker: 'retrieval-worker',
} as const;

/** Header names that carry Hopline's envelope beside the W3C trace context. */
export const headers = {
  errorCode: 'Hopline-Error-Code',
  errorMessage: 'Hopline-Error-Message',
  msgId: 'Nats-Msg-Id',
  /** On every stored question event: who asked, so that any gateway can check who may read it. */
  tenantId: 'Hopline-Tenant-Id',
  userId: 'Hopline-User-Id',
  /** On every stored question event: the kbs it reads, comma-separated (kb ids hold no comma). */
  kbIds: 'Hopline-Kb-Ids',
  /** On every stored question event: the question's deadline, for any gateway streaming it. */
  deadline: 'Hopline-Deadline-Unix-Ms',
  /** On a stored message of a question's log that holds several events: how many (a QaEventBatch). */
  eventCount: 'Hopline-Event-Count',
} as const;
