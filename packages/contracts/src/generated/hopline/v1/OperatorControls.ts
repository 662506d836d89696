// Original file: proto/hopline/v1/query_understanding.proto


export interface OperatorControls {
  'multiHop'?: (boolean);
  'hopCap'?: (number);
}

export interface OperatorControls__Output {
  'multiHop': (boolean);
  'hopCap': (number);
}
