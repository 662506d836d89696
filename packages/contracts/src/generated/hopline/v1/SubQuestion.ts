// Original file: proto/hopline/v1/query_understanding.proto


export interface SubQuestion {
  'id'?: (string);
  'text'?: (string);
  'dependsOn'?: (string)[];
}

export interface SubQuestion__Output {
  'id': (string);
  'text': (string);
  'dependsOn': (string)[];
}
