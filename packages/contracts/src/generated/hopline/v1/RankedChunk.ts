// Original file: proto/hopline/v1/reranker.proto


export interface RankedChunk {
  'position'?: (number);
  'rerankScore'?: (number | string);
  'textLength'?: (number);
}

export interface RankedChunk__Output {
  'position': (number);
  'rerankScore': (number);
  'textLength': (number);
}
