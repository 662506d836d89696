// Original file: proto/hopline/v1/qa.proto

export const Grade = {
  GRADE_UNSPECIFIED: 'GRADE_UNSPECIFIED',
  RELEVANT: 'RELEVANT',
  AMBIGUOUS: 'AMBIGUOUS',
  IRRELEVANT: 'IRRELEVANT',
} as const;

export type Grade =
  | 'GRADE_UNSPECIFIED'
  | 0
  | 'RELEVANT'
  | 1
  | 'AMBIGUOUS'
  | 2
  | 'IRRELEVANT'
  | 3

export type Grade__Output = typeof Grade[keyof typeof Grade]
