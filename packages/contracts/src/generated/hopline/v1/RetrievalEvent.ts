// Original file: proto/hopline/v1/qa.proto

import type { Grade as _hopline_v1_Grade, Grade__Output as _hopline_v1_Grade__Output } from '../../hopline/v1/Grade.js';

export interface RetrievalEvent {
  'hop'?: (number);
  'hits'?: (number);
  'chunkIds'?: (string)[];
  'grade'?: (_hopline_v1_Grade);
  'degraded'?: (boolean);
  'degradedReasons'?: (string)[];
  'rerankFallback'?: (boolean);
}

export interface RetrievalEvent__Output {
  'hop': (number);
  'hits': (number);
  'chunkIds': (string)[];
  'grade': (_hopline_v1_Grade__Output);
  'degraded': (boolean);
  'degradedReasons': (string)[];
  'rerankFallback': (boolean);
}
