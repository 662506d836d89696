// Original file: proto/hopline/v1/common.proto

import type { TextSpan as _hopline_v1_TextSpan, TextSpan__Output as _hopline_v1_TextSpan__Output } from '../../hopline/v1/TextSpan.js';
import type { Scores as _hopline_v1_Scores, Scores__Output as _hopline_v1_Scores__Output } from '../../hopline/v1/Scores.js';
import type { FoundBy as _hopline_v1_FoundBy, FoundBy__Output as _hopline_v1_FoundBy__Output } from '../../hopline/v1/FoundBy.js';
import type { Long } from '@grpc/proto-loader';

export interface Chunk {
  'chunkId'?: (string);
  'tenantId'?: (string);
  'kbId'?: (string);
  'docId'?: (string);
  'docVersion'?: (number | string | Long);
  'title'?: (string);
  'text'?: (string);
  'span'?: (_hopline_v1_TextSpan | null);
  'dedupeKey'?: (string);
  'scores'?: (_hopline_v1_Scores | null);
  'foundBy'?: (_hopline_v1_FoundBy);
  'hop'?: (number);
  'effectiveDate'?: (string);
  'sourceUri'?: (string);
}

export interface Chunk__Output {
  'chunkId': (string);
  'tenantId': (string);
  'kbId': (string);
  'docId': (string);
  'docVersion': (number);
  'title': (string);
  'text': (string);
  'span': (_hopline_v1_TextSpan__Output | null);
  'dedupeKey': (string);
  'scores': (_hopline_v1_Scores__Output | null);
  'foundBy': (_hopline_v1_FoundBy__Output);
  'hop': (number);
  'effectiveDate': (string);
  'sourceUri': (string);
}
