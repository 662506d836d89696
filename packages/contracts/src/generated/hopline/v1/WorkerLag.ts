// Original file: proto/hopline/v1/answer_gateway.proto

import type { Long } from '@grpc/proto-loader';

export interface WorkerLag {
  'workerId'?: (string);
  'ingestLag'?: (number | string | Long);
}

export interface WorkerLag__Output {
  'workerId': (string);
  'ingestLag': (number);
}
