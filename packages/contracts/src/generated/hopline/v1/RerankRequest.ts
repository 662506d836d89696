// Original file: proto/hopline/v1/reranker.proto

import type { RequestContext as _hopline_v1_RequestContext, RequestContext__Output as _hopline_v1_RequestContext__Output } from '../../hopline/v1/RequestContext.js';
import type { Chunk as _hopline_v1_Chunk, Chunk__Output as _hopline_v1_Chunk__Output } from '../../hopline/v1/Chunk.js';

export interface RerankRequest {
  'ctx'?: (_hopline_v1_RequestContext | null);
  'query'?: (string);
  'chunks'?: (_hopline_v1_Chunk)[];
  'topN'?: (number);
  'tokenBudget'?: (number);
  'replyByPosition'?: (boolean);
}

export interface RerankRequest__Output {
  'ctx': (_hopline_v1_RequestContext__Output | null);
  'query': (string);
  'chunks': (_hopline_v1_Chunk__Output)[];
  'topN': (number);
  'tokenBudget': (number);
  'replyByPosition': (boolean);
}
