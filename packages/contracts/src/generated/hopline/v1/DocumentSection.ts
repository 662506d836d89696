// Original file: proto/hopline/v1/retrieval.proto


export interface DocumentSection {
  'start'?: (number);
  'fragment'?: (string);
}

export interface DocumentSection__Output {
  'start': (number);
  'fragment': (string);
}
