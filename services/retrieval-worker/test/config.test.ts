import { describe, expect, it } from 'vitest';
import { loadConfig } from '@hopline/config';
import { configSchema } from '../src/config.js';

describe('retrieval-worker config', () => {
  it('config - fusion method and vector weight stay unset unless given, so the embedder decides', () => {
    const config = loadConfig('retrieval-worker', configSchema, {});
    expect(config.FUSION_METHOD).toBeUndefined();
    expect(config.RRF_WEIGHT_VECTOR).toBeUndefined();
    expect(config).toMatchObject({ RRF_K: 60, RRF_WEIGHT_BM25: 1 });
  });

  it('config - FUSION_METHOD takes rrf or relative-score, RRF_WEIGHT_VECTOR a non-negative number', () => {
    expect(
      loadConfig('retrieval-worker', configSchema, { FUSION_METHOD: 'relative-score', RRF_WEIGHT_VECTOR: '0.25' }),
    ).toMatchObject({
      FUSION_METHOD: 'relative-score',
      RRF_WEIGHT_VECTOR: 0.25,
    });
    expect(() => loadConfig('retrieval-worker', configSchema, { FUSION_METHOD: 'borda' })).toThrow(/FUSION_METHOD/);
    expect(() => loadConfig('retrieval-worker', configSchema, { RRF_WEIGHT_VECTOR: '-1' })).toThrow(
      /RRF_WEIGHT_VECTOR/,
    );
  });

  it('config - the bulk limits default to 256 commands a batch, 1,000 actions or 5 MiB a _bulk, 256 rows a Milvus upsert', () => {
    expect(loadConfig('retrieval-worker', configSchema, {})).toMatchObject({
      INGEST_BATCH_SIZE: 256,
      ELASTICSEARCH_BULK_MAX_OPERATIONS: 1_000,
      ELASTICSEARCH_BULK_MAX_BYTES: 5 * 1024 * 1024,
      MILVUS_UPSERT_BATCH: 256,
    });
    expect(
      loadConfig('retrieval-worker', configSchema, { INGEST_BATCH_SIZE: '64', MILVUS_UPSERT_BATCH: '1000' }),
    ).toMatchObject({ INGEST_BATCH_SIZE: 64, MILVUS_UPSERT_BATCH: 1_000 });
  });

  it.each([
    ['INGEST_BATCH_SIZE', '0'],
    ['ELASTICSEARCH_BULK_MAX_OPERATIONS', '1.5'],
    ['ELASTICSEARCH_BULK_MAX_BYTES', String(100 * 1024 * 1024 + 1)],
    ['MILVUS_UPSERT_BATCH', 'many'],
  ])('config - %s=%s is refused, naming the setting', (name, value) => {
    expect(() => loadConfig('retrieval-worker', configSchema, { [name]: value })).toThrow(new RegExp(name));
  });
});
