// Original file: proto/hopline/v1/qa.proto


export interface Restarted {
  'reason'?: (string);
}

export interface Restarted__Output {
  'reason': (string);
}
