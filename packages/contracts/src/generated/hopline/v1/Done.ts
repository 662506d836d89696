// Original file: proto/hopline/v1/qa.proto

import type { Citation as _hopline_v1_Citation, Citation__Output as _hopline_v1_Citation__Output } from '../../hopline/v1/Citation.js';
import type { StopReason as _hopline_v1_StopReason, StopReason__Output as _hopline_v1_StopReason__Output } from '../../hopline/v1/StopReason.js';
import type { StageTimings as _hopline_v1_StageTimings, StageTimings__Output as _hopline_v1_StageTimings__Output } from '../../hopline/v1/StageTimings.js';
import type { Route as _hopline_v1_Route, Route__Output as _hopline_v1_Route__Output } from '../../hopline/v1/Route.js';

export interface Done {
  'answer'?: (string);
  'citations'?: (_hopline_v1_Citation)[];
  'stopReason'?: (_hopline_v1_StopReason);
  'hops'?: (number);
  'timings'?: (_hopline_v1_StageTimings | null);
  'route'?: (_hopline_v1_Route);
  'abstained'?: (boolean);
  'degraded'?: (boolean);
  'degradedReasons'?: (string)[];
  'llmCalls'?: (number);
  'tokens'?: (number);
  'cached'?: (boolean);
}

export interface Done__Output {
  'answer': (string);
  'citations': (_hopline_v1_Citation__Output)[];
  'stopReason': (_hopline_v1_StopReason__Output);
  'hops': (number);
  'timings': (_hopline_v1_StageTimings__Output | null);
  'route': (_hopline_v1_Route__Output);
  'abstained': (boolean);
  'degraded': (boolean);
  'degradedReasons': (string)[];
  'llmCalls': (number);
  'tokens': (number);
  'cached': (boolean);
}
