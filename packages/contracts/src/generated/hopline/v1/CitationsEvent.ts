// Original file: proto/hopline/v1/qa.proto

import type { Citation as _hopline_v1_Citation, Citation__Output as _hopline_v1_Citation__Output } from '../../hopline/v1/Citation.js';

export interface CitationsEvent {
  'citations'?: (_hopline_v1_Citation)[];
}

export interface CitationsEvent__Output {
  'citations': (_hopline_v1_Citation__Output)[];
}
