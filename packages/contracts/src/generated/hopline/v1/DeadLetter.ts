// Original file: proto/hopline/v1/retrieval.proto

import type { IngestCommand as _hopline_v1_IngestCommand, IngestCommand__Output as _hopline_v1_IngestCommand__Output } from '../../hopline/v1/IngestCommand.js';

export interface DeadLetter {
  'command'?: (_hopline_v1_IngestCommand | null);
  'reason'?: (string);
  'originalSubject'?: (string);
  'deliveries'?: (number);
}

export interface DeadLetter__Output {
  'command': (_hopline_v1_IngestCommand__Output | null);
  'reason': (string);
  'originalSubject': (string);
  'deliveries': (number);
}
