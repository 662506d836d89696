// Original file: proto/hopline/v1/qa.proto


export interface TokenEvent {
  'text'?: (string);
}

export interface TokenEvent__Output {
  'text': (string);
}
