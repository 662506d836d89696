// Original file: proto/hopline/v1/retrieval.proto


export interface RetrievalTimings {
  'bm25Ms'?: (number | string);
  'vectorMs'?: (number | string);
  'fusionMs'?: (number | string);
  'graphMs'?: (number | string);
}

export interface RetrievalTimings__Output {
  'bm25Ms': (number);
  'vectorMs': (number);
  'fusionMs': (number);
  'graphMs': (number);
}
