// Original file: proto/hopline/v1/common.proto

import type { Scope as _hopline_v1_Scope, Scope__Output as _hopline_v1_Scope__Output } from '../../hopline/v1/Scope.js';
import type { Long } from '@grpc/proto-loader';

export interface RequestContext {
  'questionId'?: (string);
  'scope'?: (_hopline_v1_Scope | null);
  'deadlineUnixMs'?: (number | string | Long);
}

export interface RequestContext__Output {
  'questionId': (string);
  'scope': (_hopline_v1_Scope__Output | null);
  'deadlineUnixMs': (number);
}
