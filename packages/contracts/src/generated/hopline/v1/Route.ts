// Original file: proto/hopline/v1/query_understanding.proto

export const Route = {
  ROUTE_UNSPECIFIED: 'ROUTE_UNSPECIFIED',
  SINGLE: 'SINGLE',
  PARALLEL: 'PARALLEL',
  ITERATIVE: 'ITERATIVE',
} as const;

export type Route =
  | 'ROUTE_UNSPECIFIED'
  | 0
  | 'SINGLE'
  | 1
  | 'PARALLEL'
  | 2
  | 'ITERATIVE'
  | 3

export type Route__Output = typeof Route[keyof typeof Route]
