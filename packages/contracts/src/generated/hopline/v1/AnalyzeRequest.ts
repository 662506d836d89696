// Original file: proto/hopline/v1/query_understanding.proto

import type { RequestContext as _hopline_v1_RequestContext, RequestContext__Output as _hopline_v1_RequestContext__Output } from '../../hopline/v1/RequestContext.js';

export interface AnalyzeRequest {
  'ctx'?: (_hopline_v1_RequestContext | null);
  'question'?: (string);
}

export interface AnalyzeRequest__Output {
  'ctx': (_hopline_v1_RequestContext__Output | null);
  'question': (string);
}
