// Original file: proto/hopline/v1/retrieval.proto

import type { Chunk as _hopline_v1_Chunk, Chunk__Output as _hopline_v1_Chunk__Output } from '../../hopline/v1/Chunk.js';
import type { RetrievalTimings as _hopline_v1_RetrievalTimings, RetrievalTimings__Output as _hopline_v1_RetrievalTimings__Output } from '../../hopline/v1/RetrievalTimings.js';

export interface RetrieveResponse {
  'chunks'?: (_hopline_v1_Chunk)[];
  'degraded'?: (boolean);
  'degradedReasons'?: (string)[];
  'timings'?: (_hopline_v1_RetrievalTimings | null);
  'workerId'?: (string);
  'noGraphReason'?: (string);
}

export interface RetrieveResponse__Output {
  'chunks': (_hopline_v1_Chunk__Output)[];
  'degraded': (boolean);
  'degradedReasons': (string)[];
  'timings': (_hopline_v1_RetrievalTimings__Output | null);
  'workerId': (string);
  'noGraphReason': (string);
}
