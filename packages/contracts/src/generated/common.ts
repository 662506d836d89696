import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { Chunk as _hopline_v1_Chunk, Chunk__Output as _hopline_v1_Chunk__Output } from './hopline/v1/Chunk.js';
import type { RequestContext as _hopline_v1_RequestContext, RequestContext__Output as _hopline_v1_RequestContext__Output } from './hopline/v1/RequestContext.js';
import type { Scope as _hopline_v1_Scope, Scope__Output as _hopline_v1_Scope__Output } from './hopline/v1/Scope.js';
import type { Scores as _hopline_v1_Scores, Scores__Output as _hopline_v1_Scores__Output } from './hopline/v1/Scores.js';
import type { TextSpan as _hopline_v1_TextSpan, TextSpan__Output as _hopline_v1_TextSpan__Output } from './hopline/v1/TextSpan.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  hopline: {
    v1: {
      Chunk: MessageTypeDefinition<_hopline_v1_Chunk, _hopline_v1_Chunk__Output>
      FoundBy: EnumTypeDefinition
      RequestContext: MessageTypeDefinition<_hopline_v1_RequestContext, _hopline_v1_RequestContext__Output>
      Scope: MessageTypeDefinition<_hopline_v1_Scope, _hopline_v1_Scope__Output>
      Scores: MessageTypeDefinition<_hopline_v1_Scores, _hopline_v1_Scores__Output>
      TextSpan: MessageTypeDefinition<_hopline_v1_TextSpan, _hopline_v1_TextSpan__Output>
    }
  }
}

