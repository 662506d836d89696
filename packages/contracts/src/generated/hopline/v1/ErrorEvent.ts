// Original file: proto/hopline/v1/qa.proto


export interface ErrorEvent {
  'code'?: (string);
  'message'?: (string);
  'retryable'?: (boolean);
}

export interface ErrorEvent__Output {
  'code': (string);
  'message': (string);
  'retryable': (boolean);
}
