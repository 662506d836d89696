import type { KeyValueStore } from '@hopline/bus';
import { codecs, type KbRecord__Output } from '@hopline/contracts';
import type { Principal } from './api-keys.js';
import { problems } from './problem.js';
import type { WorkerLag } from './worker-lag.js';

/** A knowledge base as the API shows it. */
export interface KbView {
  kbId: string;
  documents: number;
  chunks: number;
  /** When it was created through the API; 0 for a kb that exists only through its documents. */
  createdUnixMs: number;
}

export interface KbServiceDeps {
  /** The kbs bucket: a KbRecord per created kb, by "<tenant>.<kb>". */
  records: KeyValueStore;
  /** What the index holds of each kb, counting everything accepted before the call. */
  stats: (tenantId: string, kbIds: readonly string[]) => Promise<Array<{ documents: number; chunks: number }>>;
  workerLag: () => WorkerLag[];
}

/**
 * Knowledge bases as a resource, always within the key's kbs: a kb exists once it was created,
 * or once documents were ingested into it (as before kbs could be created). Naming a kb outside
 * the key is 403; a kb the key may name that does not exist is 404.
 */
export class KbService {
  constructor(private readonly deps: KbServiceDeps) {}

  /**
   * The key's kbs, and for a key that may ingest each worker's lag behind the ingest stream, to
   * watch its writes land. The lag counts every tenant's changes, so a key that only reads gets
   * none: it would learn how much the fleet's other tenants write.
   */
  async list(principal: Principal): Promise<{ kbs: KbView[]; indexLag: WorkerLag[] }> {
    const kbs = await this.views(principal, principal.kbIds);
    return { kbs: kbs.filter((kb) => kb !== undefined), indexLag: principal.canIngest ? this.deps.workerLag() : [] };
  }

  async get(principal: Principal, kbId: string): Promise<KbView> {
    requireInScope(principal, kbId);
    const [kb] = await this.views(principal, [kbId]);
    if (!kb) throw problems.notFound(`no kb "${kbId}"`);
    return kb;
  }

  /**
   * Idempotent: creating a kb that exists returns it, with `created: false`. One that exists
   * through its documents alone gets its record now, so that it outlives them as a created one does.
   */
  async create(principal: Principal, kbId: string): Promise<{ kb: KbView; created: boolean }> {
    requireManage(principal, kbId);
    const [existing] = await this.views(principal, [kbId]);
    if (existing && existing.createdUnixMs > 0) return { kb: existing, created: false };
    const record = { tenantId: principal.tenantId, kbId, createdUnixMs: Date.now(), deleted: false };
    await this.deps.records.put(recordKey(principal.tenantId, kbId), codecs.kbRecord.encode(record));
    return {
      kb: {
        kbId,
        documents: existing?.documents ?? 0,
        chunks: existing?.chunks ?? 0,
        createdUnixMs: record.createdUnixMs,
      },
      created: existing === undefined,
    };
  }

  /**
   * Deletes an empty kb. A kb that still holds documents is refused (409): its documents are
   * deleted one by one first, through the ingest stream that orders them against every write.
   */
  async delete(principal: Principal, kbId: string): Promise<KbView> {
    requireManage(principal, kbId);
    const [kb] = await this.views(principal, [kbId]);
    if (!kb) throw problems.notFound(`no kb "${kbId}"`);
    if (kb.documents > 0)
      throw problems.conflict(`kb "${kbId}" still holds ${kb.documents} documents; delete them first`);
    const record = { tenantId: principal.tenantId, kbId, createdUnixMs: kb.createdUnixMs, deleted: true };
    await this.deps.records.put(recordKey(principal.tenantId, kbId), codecs.kbRecord.encode(record));
    return kb;
  }

  /** Each kb's view, or undefined where it does not exist; in the order given. */
  private async views(principal: Principal, kbIds: readonly string[]): Promise<Array<KbView | undefined>> {
    const [records, stats] = await Promise.all([
      Promise.all(kbIds.map((kbId) => this.record(principal.tenantId, kbId))),
      this.deps.stats(principal.tenantId, kbIds),
    ]);
    return kbIds.map((kbId, i) => {
      const record = records[i];
      const { documents = 0, chunks = 0 } = stats[i] ?? {};
      const created = record && !record.deleted ? record.createdUnixMs : 0;
      return created > 0 || documents > 0 ? { kbId, documents, chunks, createdUnixMs: created } : undefined;
    });
  }

  private async record(tenantId: string, kbId: string): Promise<KbRecord__Output | undefined> {
    const bytes = await this.deps.records.get(recordKey(tenantId, kbId));
    return bytes ? codecs.kbRecord.decode(bytes) : undefined;
  }
}

function recordKey(tenantId: string, kbId: string): string {
  return `${tenantId}.${kbId}`;
}

function requireInScope(principal: Principal, kbId: string): void {
  if (!principal.kbIds.includes(kbId)) throw problems.forbidden(`this key may not read "${kbId}"`);
}

function requireManage(principal: Principal, kbId: string): void {
  requireInScope(principal, kbId);
  if (!principal.canIngest) throw problems.forbidden('this key may not create or delete knowledge bases');
}
