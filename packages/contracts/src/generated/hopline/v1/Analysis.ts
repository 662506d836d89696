// Original file: proto/hopline/v1/query_understanding.proto

import type { Route as _hopline_v1_Route, Route__Output as _hopline_v1_Route__Output } from '../../hopline/v1/Route.js';
import type { SubQuestion as _hopline_v1_SubQuestion, SubQuestion__Output as _hopline_v1_SubQuestion__Output } from '../../hopline/v1/SubQuestion.js';
import type { DecidedBy as _hopline_v1_DecidedBy, DecidedBy__Output as _hopline_v1_DecidedBy__Output } from '../../hopline/v1/DecidedBy.js';
import type { OperatorControls as _hopline_v1_OperatorControls, OperatorControls__Output as _hopline_v1_OperatorControls__Output } from '../../hopline/v1/OperatorControls.js';

export interface Analysis {
  'route'?: (_hopline_v1_Route);
  'subQuestions'?: (_hopline_v1_SubQuestion)[];
  'complexity'?: (number);
  'signals'?: (string)[];
  'hydeText'?: (string);
  'decidedBy'?: (_hopline_v1_DecidedBy);
  'fallbackReason'?: (string);
  'llmCalls'?: (number);
  'tokens'?: (number);
  'controls'?: (_hopline_v1_OperatorControls | null);
}

export interface Analysis__Output {
  'route': (_hopline_v1_Route__Output);
  'subQuestions': (_hopline_v1_SubQuestion__Output)[];
  'complexity': (number);
  'signals': (string)[];
  'hydeText': (string);
  'decidedBy': (_hopline_v1_DecidedBy__Output);
  'fallbackReason': (string);
  'llmCalls': (number);
  'tokens': (number);
  'controls': (_hopline_v1_OperatorControls__Output | null);
}
