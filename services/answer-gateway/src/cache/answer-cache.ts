import { createHash } from 'node:crypto';
import { codecs, ValidationError, type Done__Output, type QaEvent } from '@hopline/contracts';
import { setNewest } from '../newest-first.js';

/**
 * Where cached answers and kb versions live: Redis (shared by every gateway instance) or an
 * in-process LRU. Values are opaque bytes; the AnswerCache above it owns keys and encoding.
 */
export interface AnswerCacheStore {
  readonly kind: 'redis' | 'memory';
  /** True when it is set to keep no entry (an LRU of size 0): then nothing is keyed or encoded. */
  readonly keepsNothing?: boolean;
  get(key: string): Promise<Uint8Array | undefined>;
  set(key: string, value: Uint8Array, ttlMs: number): Promise<void>;
  /** The current version token of each kb, in the order given. */
  kbVersions(tenantId: string, kbIds: readonly string[]): Promise<string[]>;
  /** Gives the kb a version token it never had, so every answer cached before no longer matches. */
  bumpKbVersion(tenantId: string, kbId: string): Promise<void>;
  close(): Promise<void>;
}

export interface CacheScope {
  tenantId: string;
  userId: string;
  kbIds: readonly string[];
  /** The selected documents; an answer over a selection is not the answer over the whole kb. */
  docIds?: readonly string[];
}

/**
 * What bounds the reasoning behind an answer: the ask's hop budget and the operators' controls
 * in force (multi-hop off makes every question single-shot; the hop cap bounds its hops).
 */
export interface CacheReasoning {
  maxHops: number;
  multiHop: boolean;
  hopCap: number;
}

export interface CacheLookupMetrics {
  inc(labels: { cache: string; result: 'hit' | 'miss' | 'error' }): void;
}

export interface AnswerCacheOptions {
  ttlMs: number;
  /** Counts lookups by result; failures of the store are counted as `error` and treated as misses. */
  lookups?: CacheLookupMetrics;
  onError?: (message: string, error: unknown) => void;
}

// Full-width forms of ASCII ("ＡＢＣ", "？"), as an input method types them.
const FULL_WIDTH = /[\uFF01-\uFF5E]/g;
const FULL_WIDTH_OFFSET = 0xfee0;

/**
 * The question as the cache compares it: case, width, spacing and closing punctuation do not
 * matter. Width only: NFKC would also make "10³" read "103" and "H₂O" "H2O", other questions.
 */
export function normaliseQuestion(question: string): string {
  return question
    .normalize('NFC')
    .replace(FULL_WIDTH, (char) => String.fromCharCode(char.charCodeAt(0) - FULL_WIDTH_OFFSET))
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s?!.。？！]+$/u, '')
    .trim();
}

/** A cached answer: its done, and the question that computed it, whose trace is the answer's. */
export interface CachedAnswer {
  questionId: string;
  done: Done__Output;
}

/** A cached answer is stored as the question's own `done` event: its id and its answer. */
function encodeAnswer({ questionId, done }: CachedAnswer): Uint8Array {
  return codecs.qaEvent.encode({ questionId, done: { ...done, cached: false } } as QaEvent);
}

function decodeAnswer(bytes: Uint8Array): CachedAnswer {
  const event = codecs.qaEvent.decode(bytes);
  if (!event.done || !event.questionId) throw new ValidationError('malformed cached answer: no done event');
  return { questionId: event.questionId, done: event.done };
}

/**
 * Finished answers keyed by tenant, user, kb scope, the kbs' versions, hop budget, the
 * operators' controls and the normalised question. Ingestion bumps a kb's version, so an answer computed before it is
 * never served again. A lookup without a user never matches, and the store failing only
 * costs the cache: the question is answered as if nothing were cached.
 */
export class AnswerCache {
  /** Kbs whose version could not be bumped: no answer over them is cached or served until it is. */
  private readonly unbumped = new Set<string>();
  /** The kbs answers were keyed over here, latest last: those a missed change may have left stale. */
  private readonly keyedKbs = new Map<string, true>();

  constructor(
    private readonly store: AnswerCacheStore,
    private readonly options: AnswerCacheOptions,
  ) {}

  get kind(): AnswerCacheStore['kind'] {
    return this.store.kind;
  }

  /** The key an answer to this question in this scope is cached under now; undefined when it must not be cached. */
  async keyFor(scope: CacheScope, question: string, reasoning: CacheReasoning): Promise<string | undefined> {
    if (this.store.keepsNothing || !scope.tenantId || !scope.userId || scope.kbIds.length === 0) return undefined;
    const kbIds = [...new Set(scope.kbIds)].sort();
    for (const kbId of kbIds) this.noteKeyed(scope.tenantId, kbId);
    let versions: string[];
    try {
      for (const kbId of kbIds) {
        if (this.unbumped.has(unbumpedKey(scope.tenantId, kbId))) await this.kbChanged(scope.tenantId, kbId);
      }
      versions = await this.store.kbVersions(scope.tenantId, kbIds);
    } catch (error) {
      this.options.onError?.('answer cache: could not read kb versions', error);
      this.options.lookups?.inc({ cache: 'answer', result: 'error' });
      return undefined;
    }
    // v5: questions normalised by width only (v4's NFKC keys folded some distinct questions).
    const identity = JSON.stringify([
      'v5',
      scope.tenantId,
      scope.userId,
      kbIds,
      [...new Set(scope.docIds ?? [])].sort(),
      versions,
      reasoning.maxHops,
      reasoning.multiHop,
      reasoning.hopCap,
      normaliseQuestion(question),
    ]);
    return `hopline:answer:${createHash('sha256').update(identity).digest('hex')}`;
  }

  async get(key: string): Promise<CachedAnswer | undefined> {
    let bytes: Uint8Array | undefined;
    try {
      bytes = await this.store.get(key);
    } catch (error) {
      this.options.onError?.('answer cache: lookup failed', error);
      this.options.lookups?.inc({ cache: 'answer', result: 'error' });
      return undefined;
    }
    this.options.lookups?.inc({ cache: 'answer', result: bytes ? 'hit' : 'miss' });
    if (!bytes) return undefined;
    try {
      const answer = decodeAnswer(bytes);
      return { questionId: answer.questionId, done: { ...answer.done, cached: true } };
    } catch (error) {
      this.options.onError?.('answer cache: dropped an entry that does not decode', error);
      return undefined;
    }
  }

  /** Stores a finished answer unless it is not worth reusing (degraded, cut short). */
  async put(key: string, answer: CachedAnswer): Promise<boolean> {
    if (!isReusable(answer.done)) return false;
    try {
      await this.store.set(key, encodeAnswer(answer), this.options.ttlMs);
      return true;
    } catch (error) {
      this.options.onError?.('answer cache: store failed', error);
      return false;
    }
  }

  /**
   * Bumps the kb's version. When the store refuses, the kb is remembered and its answers
   * bypass the cache until a later bump succeeds, so a missed change never serves a stale answer.
   */
  async kbChanged(tenantId: string, kbId: string): Promise<void> {
    const key = unbumpedKey(tenantId, kbId);
    try {
      await this.store.bumpKbVersion(tenantId, kbId);
    } catch (error) {
      this.unbumped.add(key);
      throw error;
    }
    this.unbumped.delete(key);
  }

  /**
   * Kb changes may have been missed (the announcements are core NATS messages, and the gateway's
   * connection was down): every kb an answer was keyed over here is bumped before its answers
   * are served or cached again, as a kb whose bump failed is.
   */
  changesMayHaveBeenMissed(): void {
    for (const key of this.keyedKbs.keys()) this.unbumped.add(key);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private noteKeyed(tenantId: string, kbId: string): void {
    // The oldest go first: a kb not asked about since many others were has few answers left to go stale.
    setNewest(this.keyedKbs, unbumpedKey(tenantId, kbId), true, KEYED_KBS_REMEMBERED);
  }
}

/** Kbs remembered for `changesMayHaveBeenMissed`: far more than a gateway answers over within a TTL. */
const KEYED_KBS_REMEMBERED = 10_000;

const unbumpedKey = (tenantId: string, kbId: string) => `${tenantId}/${kbId}`;

// A degraded answer would outlive the outage that degraded it; an answer cut short by the
// deadline or a cancel is not the answer to the question.
function isReusable(done: Done__Output): boolean {
  return (
    !done.degraded &&
    !done.cached &&
    done.stopReason !== 'DEADLINE' &&
    done.stopReason !== 'CANCELLED' &&
    done.stopReason !== 'BUDGET'
  );
}
