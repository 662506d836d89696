// Original file: proto/hopline/v1/reranker.proto

import type { Chunk as _hopline_v1_Chunk, Chunk__Output as _hopline_v1_Chunk__Output } from '../../hopline/v1/Chunk.js';
import type { RankedChunk as _hopline_v1_RankedChunk, RankedChunk__Output as _hopline_v1_RankedChunk__Output } from '../../hopline/v1/RankedChunk.js';

export interface RerankResponse {
  'chunks'?: (_hopline_v1_Chunk)[];
  'fallback'?: (boolean);
  'fallbackReason'?: (string);
  'scorer'?: (string);
  'ranked'?: (_hopline_v1_RankedChunk)[];
}

export interface RerankResponse__Output {
  'chunks': (_hopline_v1_Chunk__Output)[];
  'fallback': (boolean);
  'fallbackReason': (string);
  'scorer': (string);
  'ranked': (_hopline_v1_RankedChunk__Output)[];
}
