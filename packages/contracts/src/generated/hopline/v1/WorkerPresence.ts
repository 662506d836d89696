// Original file: proto/hopline/v1/retrieval.proto

import type { Long } from '@grpc/proto-loader';

export interface WorkerPresence {
  'workerId'?: (string);
  'ingestLag'?: (number | string | Long);
}

export interface WorkerPresence__Output {
  'workerId': (string);
  'ingestLag': (number);
}
