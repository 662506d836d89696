// Original file: proto/hopline/v1/retrieval.proto

import type { Long } from '@grpc/proto-loader';

export interface KbStatsRequest {
  'tenantId'?: (string);
  'kbIds'?: (string)[];
  'afterSeq'?: (number | string | Long);
}

export interface KbStatsRequest__Output {
  'tenantId': (string);
  'kbIds': (string)[];
  'afterSeq': (number);
}
