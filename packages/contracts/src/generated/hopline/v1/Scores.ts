// Original file: proto/hopline/v1/common.proto


export interface Scores {
  'bm25'?: (number | string);
  'vector'?: (number | string);
  'rrf'?: (number | string);
  'rerank'?: (number | string);
  'graph'?: (number | string);
  '_bm25'?: "bm25";
  '_vector'?: "vector";
  '_rrf'?: "rrf";
  '_rerank'?: "rerank";
  '_graph'?: "graph";
}

export interface Scores__Output {
  'bm25'?: (number);
  'vector'?: (number);
  'rrf'?: (number);
  'rerank'?: (number);
  'graph'?: (number);
  '_bm25'?: "bm25";
  '_vector'?: "vector";
  '_rrf'?: "rrf";
  '_rerank'?: "rerank";
  '_graph'?: "graph";
}
