// Original file: proto/hopline/v1/retrieval.proto

import type { Long } from '@grpc/proto-loader';

export interface DocumentLookup {
  'tenantId'?: (string);
  'kbId'?: (string);
  'docId'?: (string);
  'afterSeq'?: (number | string | Long);
}

export interface DocumentLookup__Output {
  'tenantId': (string);
  'kbId': (string);
  'docId': (string);
  'afterSeq': (number);
}
