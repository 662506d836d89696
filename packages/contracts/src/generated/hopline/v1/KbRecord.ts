// Original file: proto/hopline/v1/retrieval.proto

import type { Long } from '@grpc/proto-loader';

export interface KbRecord {
  'tenantId'?: (string);
  'kbId'?: (string);
  'createdUnixMs'?: (number | string | Long);
  'deleted'?: (boolean);
}

export interface KbRecord__Output {
  'tenantId': (string);
  'kbId': (string);
  'createdUnixMs': (number);
  'deleted': (boolean);
}
