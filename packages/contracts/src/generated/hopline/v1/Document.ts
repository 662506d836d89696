// Original file: proto/hopline/v1/retrieval.proto

import type { DocumentLayout as _hopline_v1_DocumentLayout, DocumentLayout__Output as _hopline_v1_DocumentLayout__Output } from '../../hopline/v1/DocumentLayout.js';
import type { Long } from '@grpc/proto-loader';

export interface Document {
  'tenantId'?: (string);
  'kbId'?: (string);
  'docId'?: (string);
  'version'?: (number | string | Long);
  'title'?: (string);
  'text'?: (string);
  'effectiveDate'?: (string);
  'sourceUri'?: (string);
  'metadata'?: ({[key: string]: string});
  'bodyParts'?: (number);
  'bodyId'?: (string);
  'layout'?: (_hopline_v1_DocumentLayout | null);
  '_bodyParts'?: "bodyParts";
  '_bodyId'?: "bodyId";
  '_layout'?: "layout";
}

export interface Document__Output {
  'tenantId': (string);
  'kbId': (string);
  'docId': (string);
  'version': (number);
  'title': (string);
  'text': (string);
  'effectiveDate': (string);
  'sourceUri': (string);
  'metadata': ({[key: string]: string});
  'bodyParts'?: (number);
  'bodyId'?: (string);
  'layout'?: (_hopline_v1_DocumentLayout__Output | null);
  '_bodyParts'?: "bodyParts";
  '_bodyId'?: "bodyId";
  '_layout'?: "layout";
}
