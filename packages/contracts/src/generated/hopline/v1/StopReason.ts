// Original file: proto/hopline/v1/qa.proto

export const StopReason = {
  STOP_REASON_UNSPECIFIED: 'STOP_REASON_UNSPECIFIED',
  SUFFICIENT: 'SUFFICIENT',
  UNKNOWN: 'UNKNOWN',
  DUPLICATE: 'DUPLICATE',
  NO_NEW_EVIDENCE: 'NO_NEW_EVIDENCE',
  MAX_HOPS: 'MAX_HOPS',
  DEADLINE: 'DEADLINE',
  CANCELLED: 'CANCELLED',
  BUDGET: 'BUDGET',
  NOT_ITERATIVE: 'NOT_ITERATIVE',
  INCOMPLETE: 'INCOMPLETE',
} as const;

export type StopReason =
  | 'STOP_REASON_UNSPECIFIED'
  | 0
  | 'SUFFICIENT'
  | 1
  | 'UNKNOWN'
  | 2
  | 'DUPLICATE'
  | 3
  | 'NO_NEW_EVIDENCE'
  | 4
  | 'MAX_HOPS'
  | 5
  | 'DEADLINE'
  | 6
  | 'CANCELLED'
  | 7
  | 'BUDGET'
  | 8
  | 'NOT_ITERATIVE'
  | 9
  | 'INCOMPLETE'
  | 10

export type StopReason__Output = typeof StopReason[keyof typeof StopReason]
