// Original file: proto/hopline/v1/qa.proto

import type { TextSpan as _hopline_v1_TextSpan, TextSpan__Output as _hopline_v1_TextSpan__Output } from '../../hopline/v1/TextSpan.js';
import type { Long } from '@grpc/proto-loader';

export interface Citation {
  'index'?: (number);
  'chunkId'?: (string);
  'docId'?: (string);
  'kbId'?: (string);
  'title'?: (string);
  'span'?: (_hopline_v1_TextSpan | null);
  'snippet'?: (string);
  'hop'?: (number);
  'bridgeEntity'?: (string);
  'docVersion'?: (number | string | Long);
  'sourceUri'?: (string);
  '_sourceUri'?: "sourceUri";
}

export interface Citation__Output {
  'index': (number);
  'chunkId': (string);
  'docId': (string);
  'kbId': (string);
  'title': (string);
  'span': (_hopline_v1_TextSpan__Output | null);
  'snippet': (string);
  'hop': (number);
  'bridgeEntity': (string);
  'docVersion': (number);
  'sourceUri'?: (string);
  '_sourceUri'?: "sourceUri";
}
