// Original file: proto/hopline/v1/qa.proto


export interface CancelCommand {
  'questionId'?: (string);
  'reason'?: (string);
}

export interface CancelCommand__Output {
  'questionId': (string);
  'reason': (string);
}
