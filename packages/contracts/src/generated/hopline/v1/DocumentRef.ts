// Original file: proto/hopline/v1/retrieval.proto

import type { Long } from '@grpc/proto-loader';

export interface DocumentRef {
  'tenantId'?: (string);
  'kbId'?: (string);
  'docId'?: (string);
  'version'?: (number | string | Long);
}

export interface DocumentRef__Output {
  'tenantId': (string);
  'kbId': (string);
  'docId': (string);
  'version': (number);
}
