// Original file: proto/hopline/v1/qa.proto

import type { Grade as _hopline_v1_Grade, Grade__Output as _hopline_v1_Grade__Output } from '../../hopline/v1/Grade.js';

export interface HopAnswer {
  'hop'?: (number);
  'query'?: (string);
  'answer'?: (string);
  'unknown'?: (boolean);
  'done'?: (boolean);
  'nextQuery'?: (string);
  'confidence'?: (number | string);
  'citedChunkIds'?: (string)[];
  'grade'?: (_hopline_v1_Grade);
}

export interface HopAnswer__Output {
  'hop': (number);
  'query': (string);
  'answer': (string);
  'unknown': (boolean);
  'done': (boolean);
  'nextQuery': (string);
  'confidence': (number);
  'citedChunkIds': (string)[];
  'grade': (_hopline_v1_Grade__Output);
}
