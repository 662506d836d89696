// Original file: proto/hopline/v1/retrieval.proto

import type { Long } from '@grpc/proto-loader';

export interface KbStats {
  'kbId'?: (string);
  'documents'?: (number | string | Long);
  'chunks'?: (number | string | Long);
}

export interface KbStats__Output {
  'kbId': (string);
  'documents': (number);
  'chunks': (number);
}
