import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { Chunk as _hopline_v1_Chunk, Chunk__Output as _hopline_v1_Chunk__Output } from './hopline/v1/Chunk.js';
import type { RankedChunk as _hopline_v1_RankedChunk, RankedChunk__Output as _hopline_v1_RankedChunk__Output } from './hopline/v1/RankedChunk.js';
import type { RequestContext as _hopline_v1_RequestContext, RequestContext__Output as _hopline_v1_RequestContext__Output } from './hopline/v1/RequestContext.js';
import type { RerankRequest as _hopline_v1_RerankRequest, RerankRequest__Output as _hopline_v1_RerankRequest__Output } from './hopline/v1/RerankRequest.js';
import type { RerankResponse as _hopline_v1_RerankResponse, RerankResponse__Output as _hopline_v1_RerankResponse__Output } from './hopline/v1/RerankResponse.js';
import type { RerankerClient as _hopline_v1_RerankerClient, RerankerDefinition as _hopline_v1_RerankerDefinition } from './hopline/v1/Reranker.js';
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
      RankedChunk: MessageTypeDefinition<_hopline_v1_RankedChunk, _hopline_v1_RankedChunk__Output>
      RequestContext: MessageTypeDefinition<_hopline_v1_RequestContext, _hopline_v1_RequestContext__Output>
      RerankRequest: MessageTypeDefinition<_hopline_v1_RerankRequest, _hopline_v1_RerankRequest__Output>
      RerankResponse: MessageTypeDefinition<_hopline_v1_RerankResponse, _hopline_v1_RerankResponse__Output>
      Reranker: SubtypeConstructor<typeof grpc.Client, _hopline_v1_RerankerClient> & { service: _hopline_v1_RerankerDefinition }
      Scope: MessageTypeDefinition<_hopline_v1_Scope, _hopline_v1_Scope__Output>
      Scores: MessageTypeDefinition<_hopline_v1_Scores, _hopline_v1_Scores__Output>
      TextSpan: MessageTypeDefinition<_hopline_v1_TextSpan, _hopline_v1_TextSpan__Output>
    }
  }
}

