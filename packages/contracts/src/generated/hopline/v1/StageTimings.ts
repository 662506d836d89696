// Original file: proto/hopline/v1/qa.proto


export interface StageTimings {
  'analyzeMs'?: (number | string);
  'retrieveMs'?: (number | string);
  'rerankMs'?: (number | string);
  'reasonMs'?: (number | string);
  'synthesizeMs'?: (number | string);
  'totalMs'?: (number | string);
}

export interface StageTimings__Output {
  'analyzeMs': (number);
  'retrieveMs': (number);
  'rerankMs': (number);
  'reasonMs': (number);
  'synthesizeMs': (number);
  'totalMs': (number);
}
