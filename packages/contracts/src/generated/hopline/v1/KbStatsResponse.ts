// Original file: proto/hopline/v1/retrieval.proto

import type { KbStats as _hopline_v1_KbStats, KbStats__Output as _hopline_v1_KbStats__Output } from '../../hopline/v1/KbStats.js';

export interface KbStatsResponse {
  'kbs'?: (_hopline_v1_KbStats)[];
  'workerId'?: (string);
}

export interface KbStatsResponse__Output {
  'kbs': (_hopline_v1_KbStats__Output)[];
  'workerId': (string);
}
