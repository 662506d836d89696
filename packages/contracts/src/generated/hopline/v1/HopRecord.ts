// Original file: proto/hopline/v1/qa.proto

import type { HopAnswer as _hopline_v1_HopAnswer, HopAnswer__Output as _hopline_v1_HopAnswer__Output } from '../../hopline/v1/HopAnswer.js';

export interface HopRecord {
  'hop'?: (number);
  'query'?: (string);
  'evidenceChunkIds'?: (string)[];
  'answer'?: (_hopline_v1_HopAnswer | null);
  'retrieveMs'?: (number | string);
  'rerankMs'?: (number | string);
  'reasonMs'?: (number | string);
  'degraded'?: (boolean);
}

export interface HopRecord__Output {
  'hop': (number);
  'query': (string);
  'evidenceChunkIds': (string)[];
  'answer': (_hopline_v1_HopAnswer__Output | null);
  'retrieveMs': (number);
  'rerankMs': (number);
  'reasonMs': (number);
  'degraded': (boolean);
}
