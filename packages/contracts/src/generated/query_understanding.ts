import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { Analysis as _hopline_v1_Analysis, Analysis__Output as _hopline_v1_Analysis__Output } from './hopline/v1/Analysis.js';
import type { AnalyzeRequest as _hopline_v1_AnalyzeRequest, AnalyzeRequest__Output as _hopline_v1_AnalyzeRequest__Output } from './hopline/v1/AnalyzeRequest.js';
import type { Chunk as _hopline_v1_Chunk, Chunk__Output as _hopline_v1_Chunk__Output } from './hopline/v1/Chunk.js';
import type { OperatorControls as _hopline_v1_OperatorControls, OperatorControls__Output as _hopline_v1_OperatorControls__Output } from './hopline/v1/OperatorControls.js';
import type { QueryUnderstandingClient as _hopline_v1_QueryUnderstandingClient, QueryUnderstandingDefinition as _hopline_v1_QueryUnderstandingDefinition } from './hopline/v1/QueryUnderstanding.js';
import type { RequestContext as _hopline_v1_RequestContext, RequestContext__Output as _hopline_v1_RequestContext__Output } from './hopline/v1/RequestContext.js';
import type { Scope as _hopline_v1_Scope, Scope__Output as _hopline_v1_Scope__Output } from './hopline/v1/Scope.js';
import type { Scores as _hopline_v1_Scores, Scores__Output as _hopline_v1_Scores__Output } from './hopline/v1/Scores.js';
import type { SubQuestion as _hopline_v1_SubQuestion, SubQuestion__Output as _hopline_v1_SubQuestion__Output } from './hopline/v1/SubQuestion.js';
import type { TextSpan as _hopline_v1_TextSpan, TextSpan__Output as _hopline_v1_TextSpan__Output } from './hopline/v1/TextSpan.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  hopline: {
    v1: {
      Analysis: MessageTypeDefinition<_hopline_v1_Analysis, _hopline_v1_Analysis__Output>
      AnalyzeRequest: MessageTypeDefinition<_hopline_v1_AnalyzeRequest, _hopline_v1_AnalyzeRequest__Output>
      Chunk: MessageTypeDefinition<_hopline_v1_Chunk, _hopline_v1_Chunk__Output>
      DecidedBy: EnumTypeDefinition
      FoundBy: EnumTypeDefinition
      OperatorControls: MessageTypeDefinition<_hopline_v1_OperatorControls, _hopline_v1_OperatorControls__Output>
      QueryUnderstanding: SubtypeConstructor<typeof grpc.Client, _hopline_v1_QueryUnderstandingClient> & { service: _hopline_v1_QueryUnderstandingDefinition }
      RequestContext: MessageTypeDefinition<_hopline_v1_RequestContext, _hopline_v1_RequestContext__Output>
      Route: EnumTypeDefinition
      Scope: MessageTypeDefinition<_hopline_v1_Scope, _hopline_v1_Scope__Output>
      Scores: MessageTypeDefinition<_hopline_v1_Scores, _hopline_v1_Scores__Output>
      SubQuestion: MessageTypeDefinition<_hopline_v1_SubQuestion, _hopline_v1_SubQuestion__Output>
      TextSpan: MessageTypeDefinition<_hopline_v1_TextSpan, _hopline_v1_TextSpan__Output>
    }
  }
}

