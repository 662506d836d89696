// Original file: proto/hopline/v1/retrieval.proto

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
  '_bodyParts'?: "bodyParts";
  '_bodyId'?: "bodyId";
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
  '_bodyParts'?: "bodyParts";
  '_bodyId'?: "bodyId";
}
