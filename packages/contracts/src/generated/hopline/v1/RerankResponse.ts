// Original file: proto/hopline/v1/reranker.proto

import type { Chunk as _hopline_v1_Chunk, Chunk__Output as _hopline_v1_Chunk__Output } from '../../hopline/v1/Chunk.js';

export interface RerankResponse {
  'chunks'?: (_hopline_v1_Chunk)[];
  'fallback'?: (boolean);
  'fallbackReason'?: (string);
  'scorer'?: (string);
}

export interface RerankResponse__Output {
  'chunks': (_hopline_v1_Chunk__Output)[];
  'fallback': (boolean);
  'fallbackReason': (string);
  'scorer': (string);
}
