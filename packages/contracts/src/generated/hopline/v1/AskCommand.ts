// Original file: proto/hopline/v1/qa.proto

import type { RequestContext as _hopline_v1_RequestContext, RequestContext__Output as _hopline_v1_RequestContext__Output } from '../../hopline/v1/RequestContext.js';

export interface AskCommand {
  'ctx'?: (_hopline_v1_RequestContext | null);
  'question'?: (string);
  'maxHops'?: (number);
}

export interface AskCommand__Output {
  'ctx': (_hopline_v1_RequestContext__Output | null);
  'question': (string);
  'maxHops': (number);
}
