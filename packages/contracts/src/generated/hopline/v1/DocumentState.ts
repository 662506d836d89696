// Original file: proto/hopline/v1/retrieval.proto

import type { Long } from '@grpc/proto-loader';

export interface DocumentState {
  'exists'?: (boolean);
  'version'?: (number | string | Long);
}

export interface DocumentState__Output {
  'exists': (boolean);
  'version': (number);
}
