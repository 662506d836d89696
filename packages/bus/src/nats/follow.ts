import { UnavailableError } from '@hopline/contracts';
import {
  AckPolicy,
  ConsumerEvents,
  DeliverPolicy,
  nanos,
  type ConsumerConfig,
  type ConsumerMessages,
  type NatsConnection,
} from 'nats';
import type { BusErrorReporter, StoredMessage } from '../bus.js';
import { abortableDelay } from '../delay.js';
import { fromJetStreamError } from '../nats-errors.js';
import { fromMsgHdrs } from '../wire-headers.js';
import type { ConnectionWatch } from './connection-watch.js';

/**
 * How often the server tells a follow that its consumer is alive while there is nothing to
 * send. nats.js reports two missed in a row, so a consumer lost with its node is noticed in 2–3 s.
 */
const FOLLOW_HEARTBEAT_MS = 1_000;
// How long one pull waits for messages before nats.js sends the next; at least twice the heartbeat.
const FOLLOW_PULL_EXPIRES_MS = 30_000;
// How long a follow waits before it starts a new consumer after one could not be made.
const FOLLOW_RETRY_MS = 250;
// How long making a follow's consumer may take: short, because a cluster electing its leader
// answers nothing, and the next try after the election should not wait out a longer timeout.
const FOLLOW_API_TIMEOUT_MS = 2_000;
// The server drops a follow's consumer nobody pulled from for this long: a reader whose
// process died leaves nothing behind for long (a live one pulls all the time).
const FOLLOW_INACTIVE_MS = 30_000;

export interface FollowTarget {
  nc: NatsConnection;
  watch: ConnectionWatch;
  stream: string;
  report: BusErrorReporter;
}

/**
 * Reads a stream (the whole of it, or the one subject `filter` names) in order after
 * `afterSeq`, each message once, through an ephemeral consumer of the reading's own (no acks,
 * memory storage, one replica: what an ordered consumer is).
 * Whenever that consumer shows a sign of being lost (two missed heartbeats, the consumer or
 * its stream missing, no responders, a skipped delivery, a restored connection), the follow
 * drops it and starts a new one after the last message it yielded. Only a closed connection
 * ends the reading with an error.
 *
 * Not nats.js's ordered consumer: it recovers by itself, but after a node loss too slowly for
 * a question (nats.js 2.29): it notices a lost consumer after two missed 15 s heartbeats, and
 * waits 15–45 s between its attempts to look up or recreate the consumer while the cluster
 * elects leaders; after a reconnect it stops watching heartbeats until such a lookup succeeds.
 * A question's events stopped silently for half a minute in the cluster fault.
 */
export async function* readStream(
  target: FollowTarget,
  from: { filter?: string; afterSeq: number; onCaughtUp?: () => void },
  signal: AbortSignal,
): AsyncGenerator<StoredMessage> {
  const { nc, watch, stream, report } = target;
  // How many messages, counted by the first consumer as it was made, were stored before the
  // reading joined: the first that many it yields (in order, whichever consumer brings them).
  let heldBefore: number | undefined;
  let caughtUp = from.onCaughtUp;
  const catchUp = () => {
    const call = caughtUp;
    caughtUp = undefined;
    call?.();
  };
  const subject = from.filter ?? stream;
  const js = nc.jetstream({ timeout: FOLLOW_API_TIMEOUT_MS });
  const jsm = await nc.jetstreamManager({ timeout: FOLLOW_API_TIMEOUT_MS, checkAPI: false });
  let lastSeq = from.afterSeq;
  let failures = 0;
  // One report per outage, not one per new consumer.
  const failed = (failure: Error) => {
    if (++failures === 1) report(failure, { operation: 'follow', subject });
  };
  while (!signal.aborted) {
    if (nc.isClosed()) throw new UnavailableError(`follow ${subject}: the NATS connection is closed`);
    let consumerName: string | undefined;
    let messages: ConsumerMessages | undefined;
    let lost: string | undefined;
    const drop = (why?: string) => {
      lost ??= why;
      messages?.stop();
    };
    const onAbort = () => drop();
    signal.addEventListener('abort', onAbort);
    // Across a reconnect the consumer may have been on the node that went away.
    const stopWatching = watch.onRestored(() => drop('the connection to NATS was re-established'));
    try {
      const info = await jsm.consumers.add(stream, consumerConfig(from.filter, lastSeq));
      consumerName = info.name;
      heldBefore ??= info.num_pending;
      if (heldBefore === 0) catchUp();
      messages = await js.consumers.getPullConsumerFor(info).consume({
        expires: FOLLOW_PULL_EXPIRES_MS,
        idle_heartbeat: FOLLOW_HEARTBEAT_MS,
        // A missing consumer or stream ends the reading (it is started again here) rather than
        // being retried by nats.js with its long pauses.
        abort_on_missing_resource: true,
      });
      if (signal.aborted || lost !== undefined) messages.stop();
      void dropOnMissedHeartbeats(messages, () => drop(`its consumer missed two ${FOLLOW_HEARTBEAT_MS} ms heartbeats`));
      let delivered = 0;
      for await (const delivery of messages) {
        if (delivery.info.deliverySequence !== ++delivered) {
          drop(`delivery ${delivered} of its consumer was skipped`);
          break;
        }
        if (delivery.seq <= lastSeq) continue;
        failures = 0;
        lastSeq = delivery.seq;
        const lastHeld = heldBefore !== undefined && heldBefore > 0 && --heldBefore === 0;
        yield {
          subject: delivery.subject,
          data: delivery.data,
          headers: fromMsgHdrs(delivery.headers),
          seq: delivery.seq,
        };
        if (signal.aborted) return;
        // Counted down, or nothing left to deliver: a held message may have aged out unread.
        if (lastHeld || delivery.info.pending === 0) catchUp();
      }
      if (lost !== undefined && !signal.aborted) {
        failed(new UnavailableError(`follow ${subject}: ${lost}; reading again after sequence ${lastSeq}`));
      }
    } catch (error) {
      if (signal.aborted) return;
      const failure = fromJetStreamError(error, { operation: 'follow', subject, timeoutMs: FOLLOW_API_TIMEOUT_MS });
      if (nc.isClosed()) throw failure;
      failed(failure);
      await abortableDelay(FOLLOW_RETRY_MS, signal);
    } finally {
      signal.removeEventListener('abort', onAbort);
      stopWatching();
      messages?.stop();
      // Not awaited: with its node gone the deletion would only time out, and the server
      // removes the consumer after FOLLOW_INACTIVE_MS anyway.
      if (consumerName !== undefined) void jsm.consumers.delete(stream, consumerName).catch(() => undefined);
    }
  }
}

function consumerConfig(filter: string | undefined, lastSeq: number): Partial<ConsumerConfig> {
  return {
    ack_policy: AckPolicy.None,
    ...(filter === undefined ? {} : { filter_subject: filter }),
    ...(lastSeq > 0
      ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: lastSeq + 1 }
      : { deliver_policy: DeliverPolicy.All }),
    inactive_threshold: nanos(FOLLOW_INACTIVE_MS),
    mem_storage: true,
    num_replicas: 1,
  };
}

/** nats.js only tells of missed heartbeats (and retries by itself, slowly): this acts on it. */
async function dropOnMissedHeartbeats(messages: ConsumerMessages, drop: () => void): Promise<void> {
  for await (const status of await messages.status()) {
    if (status.type === ConsumerEvents.HeartbeatsMissed) drop();
  }
}
