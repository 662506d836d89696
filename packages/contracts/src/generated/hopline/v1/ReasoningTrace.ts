// Original file: proto/hopline/v1/qa.proto

import type { Scope as _hopline_v1_Scope, Scope__Output as _hopline_v1_Scope__Output } from '../../hopline/v1/Scope.js';
import type { Analysis as _hopline_v1_Analysis, Analysis__Output as _hopline_v1_Analysis__Output } from '../../hopline/v1/Analysis.js';
import type { HopRecord as _hopline_v1_HopRecord, HopRecord__Output as _hopline_v1_HopRecord__Output } from '../../hopline/v1/HopRecord.js';
import type { StopReason as _hopline_v1_StopReason, StopReason__Output as _hopline_v1_StopReason__Output } from '../../hopline/v1/StopReason.js';
import type { StageTimings as _hopline_v1_StageTimings, StageTimings__Output as _hopline_v1_StageTimings__Output } from '../../hopline/v1/StageTimings.js';
import type { Citation as _hopline_v1_Citation, Citation__Output as _hopline_v1_Citation__Output } from '../../hopline/v1/Citation.js';
import type { Long } from '@grpc/proto-loader';

export interface ReasoningTrace {
  'questionId'?: (string);
  'scope'?: (_hopline_v1_Scope | null);
  'question'?: (string);
  'analysis'?: (_hopline_v1_Analysis | null);
  'hops'?: (_hopline_v1_HopRecord)[];
  'stopReason'?: (_hopline_v1_StopReason);
  'timings'?: (_hopline_v1_StageTimings | null);
  'llmCalls'?: (number);
  'tokens'?: (number);
  'finalEvidenceChunkIds'?: (string)[];
  'createdUnixMs'?: (number | string | Long);
  'citations'?: (_hopline_v1_Citation)[];
  'answer'?: (string);
  'abstained'?: (boolean);
  'degradedReasons'?: (string)[];
  'attempt'?: (number);
}

export interface ReasoningTrace__Output {
  'questionId': (string);
  'scope': (_hopline_v1_Scope__Output | null);
  'question': (string);
  'analysis': (_hopline_v1_Analysis__Output | null);
  'hops': (_hopline_v1_HopRecord__Output)[];
  'stopReason': (_hopline_v1_StopReason__Output);
  'timings': (_hopline_v1_StageTimings__Output | null);
  'llmCalls': (number);
  'tokens': (number);
  'finalEvidenceChunkIds': (string)[];
  'createdUnixMs': (number);
  'citations': (_hopline_v1_Citation__Output)[];
  'answer': (string);
  'abstained': (boolean);
  'degradedReasons': (string)[];
  'attempt': (number);
}
