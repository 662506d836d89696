import { jetstream, subjects } from './subjects.js';

/** The services that hold a NATS connection. query-understanding and the reranker speak gRPC only. */
export const natsClients = ['answer-gateway', 'hop-reasoner', 'retrieval-worker'] as const;
export type NatsClientName = (typeof natsClients)[number];

/**
 * The NATS users `pnpm fabric:credentials` makes: one per service above, `embedded` for the
 * embedded mode's one process (it opens the three services' connections under one identity),
 * `operator-controls` for `pnpm controls`, which connects under that name, and
 * `operator-inspect` for the NATS chart's nats-box, from which operators read the streams' state.
 */
export const natsUsers = [...natsClients, 'embedded', 'operator-controls', 'operator-inspect'] as const;
export type NatsUserName = (typeof natsUsers)[number];

/**
 * What one service's NATS user may do. Everything not listed is refused by the server. Replies
 * to requests a service received go to the requester's inbox under `allow_responses`, which
 * lets a responder publish to a reply subject only while answering a request it got.
 */
export interface SubjectPermissions {
  publish: readonly string[];
  subscribe: readonly string[];
  /** May answer requests it received (one reply each), wherever their reply subject points. */
  allowResponses: boolean;
}

/**
 * Each service's replies arrive under an inbox prefix of its own, so that a user may read only
 * its own replies: with the shared `_INBOX.>` any service could read every other one's.
 */
export const inboxPrefix = (service: string): string => `_INBOX.${service}`;

const API = '$JS.API';

/** Finding, creating and updating a stream: what `ensureStream` in @hopline/bus does at start-up. */
const manageStream = (stream: string): string[] => [
  `${API}.STREAM.INFO.${stream}`,
  `${API}.STREAM.CREATE.${stream}`,
  `${API}.STREAM.UPDATE.${stream}`,
];

/** A durable consumer of the stream: made or updated at start-up, then pulled from and acked. */
const pullDurable = (stream: string, consumer: string): string[] => [
  `${API}.CONSUMER.INFO.${stream}.${consumer}`,
  `${API}.CONSUMER.CREATE.${stream}.${consumer}`,
  `${API}.CONSUMER.CREATE.${stream}.${consumer}.>`,
  `${API}.CONSUMER.DURABLE.CREATE.${stream}.${consumer}`,
  `${API}.CONSUMER.MSG.NEXT.${stream}.${consumer}`,
  `$JS.ACK.${stream}.${consumer}.>`,
];

/**
 * Deleting a durable consumer of the stream: a retrieval worker whose embedded index holds nothing
 * starts its own consumer again from the stream's first message (`fromStart` in @hopline/bus).
 */
const resetDurable = (stream: string, consumer: string): string[] => [`${API}.CONSUMER.DELETE.${stream}.${consumer}`];

/**
 * A subject's messages by JetStream's message get: its last (a question's last event), or the
 * next from a sequence on (what a shared follow reads of a subject's earlier messages).
 */
const readLast = (stream: string): string[] => [`${API}.STREAM.MSG.GET.${stream}`, `${API}.DIRECT.GET.${stream}.>`];

/** Ordered consumers: ephemeral, named by the client, recreated after a gap, deleted when done. */
const orderedRead = (stream: string): string[] => [
  `${API}.CONSUMER.CREATE.${stream}`,
  `${API}.CONSUMER.CREATE.${stream}.>`,
  `${API}.CONSUMER.INFO.${stream}.*`,
  `${API}.CONSUMER.DELETE.${stream}.*`,
  `${API}.CONSUMER.MSG.NEXT.${stream}.*`,
  `$JS.FC.${stream}.>`,
];

/** A key-value bucket: its stream, its keys' subjects and reads by key. */
const kvBucket = (bucket: string) => {
  const stream = `KV_${bucket}`;
  return {
    write: [...manageStream(stream), `$KV.${bucket}.>`, ...readLast(stream)],
    read: [...manageStream(stream), ...readLast(stream)],
  };
};
const traceBucket = kvBucket(jetstream.traceBucket);
/** The kbs tenants created: written by the gateway alone. */
const kbBucket = kvBucket(jetstream.kbBucket);
/**
 * The operators' controls: read and watched (an ordered consumer) by the hop-reasoners, which
 * reason under them, and the gateways, which key cached answers by them; set by `pnpm controls` alone.
 */
const watchControls = [...kvBucket(jetstream.controlsBucket).read, ...orderedRead(`KV_${jetstream.controlsBucket}`)];

const common = (service: string) => ({
  // JetStream's account info: a client asks for it when it first opens JetStream.
  publish: [`${API}.INFO`],
  subscribe: [`${inboxPrefix(service)}.>`],
});

/**
 * Each NATS service's permissions: what its role needs and nothing more. The gateway enqueues
 * asks and ingest commands, asks for questions' ends (a request the hop-reasoners turn into the
 * end: see "Questions" in docs/architecture.md) and reads them and the events; it cannot write question
 * events, take question jobs, read the ingest stream or answer retrievals. A hop-reasoner takes
 * jobs, reads their end requests and writes events, but cannot enqueue asks or ingest commands,
 * ask for ends, nor read other questions' logs through a consumer. A retrieval worker reads the
 * ingest stream and answers retrievals, and cannot publish or read question subjects at all.
 */
const servicePermissions: Record<NatsClientName, SubjectPermissions> = {
  'answer-gateway': {
    publish: [
      ...common('answer-gateway').publish,
      subjects.askAll,
      subjects.cancelAll,
      subjects.readersAll,
      subjects.ingestAll,
      // A document too large for one message goes ahead of its command in parts.
      subjects.documentBodyAll,
      ...manageStream(jetstream.documentBodyStream),
      subjects.documentLookup,
      subjects.kbStats,
      ...manageStream(jetstream.questionStream),
      // Withdrawing a question's job once it ended.
      `${API}.STREAM.PURGE.${jetstream.questionStream}`,
      ...manageStream(jetstream.questionEventsStream),
      ...readLast(jetstream.questionEventsStream),
      ...orderedRead(jetstream.questionEventsStream),
      // Questions' end requests, wherever they were made: a question's readers follow them.
      ...manageStream(jetstream.questionEndsStream),
      ...readLast(jetstream.questionEndsStream),
      ...orderedRead(jetstream.questionEndsStream),
      ...manageStream(jetstream.ingestStream),
      // The newest command of a kb: its listing, and a delete's lookup of a document.
      ...readLast(jetstream.ingestStream),
      ...manageStream(jetstream.deadLetterStream),
      ...traceBucket.read,
      ...kbBucket.write,
      ...watchControls,
    ],
    subscribe: [
      ...common('answer-gateway').subscribe,
      subjects.readersAll,
      subjects.kbChangedAll,
      // Each worker's index lag, for the kb listing.
      subjects.retrievalPresence,
    ],
    allowResponses: false,
  },
  'hop-reasoner': {
    publish: [
      ...common('hop-reasoner').publish,
      subjects.eventsAll,
      subjects.retrieve,
      'hopline.retrieve.worker.*',
      ...manageStream(jetstream.questionStream),
      ...pullDurable(jetstream.questionStream, jetstream.questionConsumer),
      ...manageStream(jetstream.questionEventsStream),
      ...readLast(jetstream.questionEventsStream),
      // The end requests of the questions it holds: the first one stored, then each as it comes.
      ...manageStream(jetstream.questionEndsStream),
      ...readLast(jetstream.questionEndsStream),
      ...orderedRead(jetstream.questionEndsStream),
      ...traceBucket.write,
      ...watchControls,
    ],
    subscribe: [...common('hop-reasoner').subscribe, subjects.retrievalPresence],
    allowResponses: false,
  },
  'retrieval-worker': {
    publish: [
      ...common('retrieval-worker').publish,
      subjects.retrievalPresence,
      subjects.kbChangedAll,
      subjects.deadLetter,
      ...manageStream(jetstream.ingestStream),
      // The shared consumer, or with the embedded indexes one per worker (`retrieval-worker-<id>`):
      // a subject wildcard matches whole tokens only, so any consumer of the ingest stream.
      ...pullDurable(jetstream.ingestStream, '*'),
      ...resetDurable(jetstream.ingestStream, '*'),
      ...manageStream(jetstream.deadLetterStream),
      // The parts of a large document, read back before its command is applied.
      ...manageStream(jetstream.documentBodyStream),
      ...orderedRead(jetstream.documentBodyStream),
    ],
    subscribe: [
      ...common('retrieval-worker').subscribe,
      subjects.retrieve,
      'hopline.retrieve.worker.*',
      subjects.documentLookup,
      subjects.kbStats,
      // The NATS micro-service discovery subjects ($SRV.PING, $SRV.INFO.retrieval-worker, …).
      '$SRV.>',
    ],
    allowResponses: true,
  },
};

/** Everything any of `roles` may do: the embedded process is all three services at once. */
function unionOf(roles: readonly SubjectPermissions[]): SubjectPermissions {
  const union = (pick: (role: SubjectPermissions) => readonly string[]) => [...new Set(roles.flatMap(pick))];
  return {
    publish: union((role) => role.publish),
    subscribe: union((role) => role.subscribe),
    allowResponses: roles.some((role) => role.allowResponses),
  };
}

/**
 * What `nats stream info`, `nats stream ls` and `nats consumer info` ask: the state of streams and
 * consumers (counts, sequences, pending and redelivered messages) and, when asked, a stream's
 * subjects (question ids, bucket keys); never a message itself.
 */
const inspectStreams = [
  `${API}.STREAM.NAMES`,
  `${API}.STREAM.LIST`,
  `${API}.STREAM.INFO.*`,
  `${API}.CONSUMER.NAMES.*`,
  `${API}.CONSUMER.LIST.*`,
  `${API}.CONSUMER.INFO.*.*`,
];

/**
 * Each NATS user's permissions. The embedded process holds the three services' connections, each
 * under its service's name (so its own inboxes are the services' ones). The operators' controls
 * command writes the controls bucket and nothing else: it cannot read questions or their events.
 * The operators' inspection reads the streams' state and nothing else: no message.
 */
export const natsPermissions: Record<NatsUserName, SubjectPermissions> = {
  ...servicePermissions,
  embedded: unionOf(natsClients.map((service) => servicePermissions[service])),
  'operator-controls': {
    publish: [...common('operator-controls').publish, ...kvBucket(jetstream.controlsBucket).write],
    subscribe: common('operator-controls').subscribe,
    allowResponses: false,
  },
  'operator-inspect': {
    publish: [...common('operator-inspect').publish, ...inspectStreams],
    subscribe: common('operator-inspect').subscribe,
    allowResponses: false,
  },
};
