// Original file: proto/hopline/v1/common.proto


export interface TextSpan {
  'start'?: (number);
  'end'?: (number);
}

export interface TextSpan__Output {
  'start': (number);
  'end': (number);
}
