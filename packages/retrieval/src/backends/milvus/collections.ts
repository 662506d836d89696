import type { FieldType, MilvusClient } from '@zilliz/milvus2-sdk-node';
import { DataType } from '@zilliz/milvus2-sdk-node';
import { UnavailableError, ValidationError } from '@hopline/contracts';
import type { MilvusStatus } from './errors.js';
import { checkStatus, milvusError, succeeded } from './errors.js';

/** Where the adapter reports its start-up steps; the service passes its JSON logger. */
export interface MilvusSetupLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface HnswParameters {
  /** Graph degree (default 16). */
  M: number;
  /** Candidate list while building (default 200). */
  efConstruction: number;
  /** Candidate list while searching (default 64; raised to the result size when that is larger). */
  ef: number;
}

export const DEFAULT_MILVUS_HNSW: HnswParameters = { M: 16, efConstruction: 200, ef: 64 };

/** Byte limits of the VarChar fields; ids longer than these are refused before they are sent. */
export const VARCHAR_LIMITS = { pk: 2_048, id: 512 } as const;

/**
 * Milvus will not create a collection without a vector field, and the document records need
 * none: they carry this constant, indexed FLAT, never searched.
 */
export const RECORD_PLACEHOLDER = [1, 0];

const varchar = (name: string, maxLength: number, extra: Partial<FieldType> = {}): FieldType => ({
  name,
  data_type: DataType.VarChar,
  max_length: maxLength,
  ...extra,
});

/**
 * One row per chunk version. `tenant_id` is the partition key: Milvus hashes tenants onto
 * partitions and prunes to the caller's one when the filter names it, which every search does.
 */
export function chunkCollectionFields(dimensions: number): FieldType[] {
  return [
    varchar('pk', VARCHAR_LIMITS.pk, { is_primary_key: true, autoID: false }),
    varchar('chunk_id', VARCHAR_LIMITS.id),
    varchar('tenant_id', VARCHAR_LIMITS.id, { is_partition_key: true }),
    varchar('kb_id', VARCHAR_LIMITS.id),
    varchar('doc_id', VARCHAR_LIMITS.id),
    { name: 'doc_version', data_type: DataType.Int64 },
    // Title, text, span, dedupe key, date and source: returned with a hit, never filtered on.
    { name: 'chunk', data_type: DataType.JSON },
    { name: 'vector', data_type: DataType.FloatVector, dim: dimensions },
  ];
}

/** One row per document version written (deletes included); the newest is the document's state. */
export function documentCollectionFields(): FieldType[] {
  return [
    varchar('pk', VARCHAR_LIMITS.pk, { is_primary_key: true, autoID: false }),
    varchar('tenant_id', VARCHAR_LIMITS.id),
    varchar('kb_id', VARCHAR_LIMITS.id),
    varchar('doc_id', VARCHAR_LIMITS.id),
    { name: 'doc_version', data_type: DataType.Int64 },
    { name: 'deleted', data_type: DataType.Bool },
    { name: 'chunks', data_type: DataType.Int64 },
    { name: 'placeholder', data_type: DataType.FloatVector, dim: RECORD_PLACEHOLDER.length },
  ];
}

export interface CollectionPlan {
  name: string;
  fields: FieldType[];
  vectorField: string;
  dimensions: number;
  index: { index_type: string; metric_type: string; params: Record<string, number> };
}

/**
 * Creates the collection, its vector index, and loads it, unless already there. An existing
 * collection must hold vectors of the configured length; an index built with other parameters
 * is kept, with a warning, since only a rebuild applies new ones.
 */
export async function ensureCollection(
  client: MilvusClient,
  plan: CollectionPlan,
  log: MilvusSetupLog,
  loadTimeoutMs: number,
): Promise<void> {
  const what = `collection ${plan.name}`;
  const exists = await startupCall(`checking ${what}`, () => client.hasCollection({ collection_name: plan.name }));
  checkStatus(exists.status, `checking ${what}`);
  let created = false;
  if (!exists.value) {
    const status = await startupCall(`creating ${what}`, () =>
      client
        .createCollection({ collection_name: plan.name, fields: plan.fields, consistency_level: 'Bounded' })
        .catch(statusOrThrow),
    );
    if (!isAlreadyThere(status)) {
      checkStatus(status, `creating ${what}`);
      created = true;
      log.info('milvus: collection created', { collection: plan.name });
    }
  }
  const description = await startupCall(`describing ${what}`, () =>
    client.describeCollection({ collection_name: plan.name }),
  );
  checkStatus(description.status, `describing ${what}`);
  const vector = description.schema.fields.find((field) => field.name === plan.vectorField);
  const dimensions = Number(vector?.type_params?.find((param) => param.key === 'dim')?.value);
  if (dimensions !== plan.dimensions) {
    throw new ValidationError(
      `milvus ${what} holds ${Number.isNaN(dimensions) ? 'no' : `${dimensions}-dimension`} "${plan.vectorField}" vectors, the embedder makes ${plan.dimensions}; ` +
        'point MILVUS_COLLECTION at a new collection (and reindex) or use the embedder it was built with',
    );
  }
  const index = await startupCall(`indexing ${what}`, () =>
    client.createIndex({ collection_name: plan.name, field_name: plan.vectorField, ...plan.index }),
  );
  if (created) checkStatus(index, `indexing ${what}`);
  else if (!succeeded(index))
    log.warn('milvus: the existing vector index differs from the configured one; rebuild it to apply', {
      collection: plan.name,
      reason: index.reason,
      configured: plan.index,
    });
  checkStatus(
    await startupCall(`loading ${what}`, () => client.loadCollectionAsync({ collection_name: plan.name })),
    `loading ${what}`,
  );
  await waitUntilLoaded(client, plan.name, loadTimeoutMs);
}

async function waitUntilLoaded(client: MilvusClient, collection: string, timeoutMs: number): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  for (let pauseMs = 25; ; pauseMs = Math.min(pauseMs * 2, 1_000)) {
    const load = await startupCall(`loading collection ${collection}`, () =>
      client.getLoadState({ collection_name: collection }),
    );
    checkStatus(load.status, `loading collection ${collection}`);
    if (load.state === 'LoadStateLoaded') return;
    if (Date.now() + pauseMs > giveUpAt)
      throw new UnavailableError(
        `milvus collection ${collection} did not load within ${timeoutMs} ms (state ${load.state})`,
      );
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

async function startupCall<T>(what: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw milvusError(error, what);
  }
}

/** The SDK's createCollection throws the reply status instead of returning it when it failed. */
function statusOrThrow(error: unknown): MilvusStatus {
  if (typeof error === 'object' && error !== null && 'error_code' in error) return error as MilvusStatus;
  throw error;
}

/** Another worker created it between our check and our create. */
function isAlreadyThere(status: MilvusStatus): boolean {
  return !succeeded(status) && /already exist/i.test(status.reason ?? '');
}
