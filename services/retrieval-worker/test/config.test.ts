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
});
