// Original file: proto/hopline/v1/answer_gateway.proto


export interface AskRequest {
  'question'?: (string);
  'kbIds'?: (string)[];
  'maxHops'?: (number);
  'resumeQuestionId'?: (string);
  'lastEventId'?: (number);
  'docIds'?: (string)[];
}

export interface AskRequest__Output {
  'question': (string);
  'kbIds': (string)[];
  'maxHops': (number);
  'resumeQuestionId': (string);
  'lastEventId': (number);
  'docIds': (string)[];
}
