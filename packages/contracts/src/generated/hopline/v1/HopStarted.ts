// Original file: proto/hopline/v1/qa.proto


export interface HopStarted {
  'hop'?: (number);
  'maxHops'?: (number);
  'subQuestion'?: (string);
}

export interface HopStarted__Output {
  'hop': (number);
  'maxHops': (number);
  'subQuestion': (string);
}
