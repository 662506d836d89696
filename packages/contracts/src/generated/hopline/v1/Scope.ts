// Original file: proto/hopline/v1/common.proto


export interface Scope {
  'tenantId'?: (string);
  'userId'?: (string);
  'kbIds'?: (string)[];
  'docIds'?: (string)[];
}

export interface Scope__Output {
  'tenantId': (string);
  'userId': (string);
  'kbIds': (string)[];
  'docIds': (string)[];
}
