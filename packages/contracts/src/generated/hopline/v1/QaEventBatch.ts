// Original file: proto/hopline/v1/qa.proto

import type { QaEvent as _hopline_v1_QaEvent, QaEvent__Output as _hopline_v1_QaEvent__Output } from '../../hopline/v1/QaEvent.js';

export interface QaEventBatch {
  'events'?: (_hopline_v1_QaEvent)[];
}

export interface QaEventBatch__Output {
  'events': (_hopline_v1_QaEvent__Output)[];
}
