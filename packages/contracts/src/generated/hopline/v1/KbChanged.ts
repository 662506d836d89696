// Original file: proto/hopline/v1/retrieval.proto

import type { Long } from '@grpc/proto-loader';

export interface KbChanged {
  'tenantId'?: (string);
  'kbId'?: (string);
  'docId'?: (string);
  'docVersion'?: (number | string | Long);
}

export interface KbChanged__Output {
  'tenantId': (string);
  'kbId': (string);
  'docId': (string);
  'docVersion': (number);
}
