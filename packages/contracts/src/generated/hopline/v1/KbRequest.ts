// Original file: proto/hopline/v1/answer_gateway.proto


export interface KbRequest {
  'kbId'?: (string);
}

export interface KbRequest__Output {
  'kbId': (string);
}
