// Original file: proto/hopline/v1/query_understanding.proto

export const DecidedBy = {
  DECIDED_BY_UNSPECIFIED: 'DECIDED_BY_UNSPECIFIED',
  RULES: 'RULES',
  MODEL: 'MODEL',
  FALLBACK: 'FALLBACK',
} as const;

export type DecidedBy =
  | 'DECIDED_BY_UNSPECIFIED'
  | 0
  | 'RULES'
  | 1
  | 'MODEL'
  | 2
  | 'FALLBACK'
  | 3

export type DecidedBy__Output = typeof DecidedBy[keyof typeof DecidedBy]
