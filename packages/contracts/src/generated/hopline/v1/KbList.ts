// Original file: proto/hopline/v1/answer_gateway.proto

import type { Kb as _hopline_v1_Kb, Kb__Output as _hopline_v1_Kb__Output } from '../../hopline/v1/Kb.js';
import type { WorkerLag as _hopline_v1_WorkerLag, WorkerLag__Output as _hopline_v1_WorkerLag__Output } from '../../hopline/v1/WorkerLag.js';

export interface KbList {
  'kbs'?: (_hopline_v1_Kb)[];
  'indexLag'?: (_hopline_v1_WorkerLag)[];
}

export interface KbList__Output {
  'kbs': (_hopline_v1_Kb__Output)[];
  'indexLag': (_hopline_v1_WorkerLag__Output)[];
}
