// Original file: proto/hopline/v1/answer_gateway.proto

import type { Long } from '@grpc/proto-loader';

export interface Kb {
  'kbId'?: (string);
  'documents'?: (number | string | Long);
  'chunks'?: (number | string | Long);
  'createdUnixMs'?: (number | string | Long);
}

export interface Kb__Output {
  'kbId': (string);
  'documents': (number);
  'chunks': (number);
  'createdUnixMs': (number);
}
