// Original file: proto/hopline/v1/common.proto

export const FoundBy = {
  FOUND_BY_UNSPECIFIED: 'FOUND_BY_UNSPECIFIED',
  BM25: 'BM25',
  VECTOR: 'VECTOR',
  HYBRID: 'HYBRID',
  ENTITY_GRAPH: 'ENTITY_GRAPH',
} as const;

export type FoundBy =
  | 'FOUND_BY_UNSPECIFIED'
  | 0
  | 'BM25'
  | 1
  | 'VECTOR'
  | 2
  | 'HYBRID'
  | 3
  | 'ENTITY_GRAPH'
  | 4

export type FoundBy__Output = typeof FoundBy[keyof typeof FoundBy]
