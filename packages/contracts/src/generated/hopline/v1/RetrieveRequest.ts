// Original file: proto/hopline/v1/retrieval.proto

import type { RequestContext as _hopline_v1_RequestContext, RequestContext__Output as _hopline_v1_RequestContext__Output } from '../../hopline/v1/RequestContext.js';

export interface RetrieveRequest {
  'ctx'?: (_hopline_v1_RequestContext | null);
  'query'?: (string);
  'hydeText'?: (string);
  'topK'?: (number);
  'hop'?: (number);
  'seeds'?: (string)[];
}

export interface RetrieveRequest__Output {
  'ctx': (_hopline_v1_RequestContext__Output | null);
  'query': (string);
  'hydeText': (string);
  'topK': (number);
  'hop': (number);
  'seeds': (string)[];
}
