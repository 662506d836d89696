import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { Accepted as _hopline_v1_Accepted, Accepted__Output as _hopline_v1_Accepted__Output } from './hopline/v1/Accepted.js';
import type { Analysis as _hopline_v1_Analysis, Analysis__Output as _hopline_v1_Analysis__Output } from './hopline/v1/Analysis.js';
import type { AnalyzeRequest as _hopline_v1_AnalyzeRequest, AnalyzeRequest__Output as _hopline_v1_AnalyzeRequest__Output } from './hopline/v1/AnalyzeRequest.js';
import type { AnswerGatewayClient as _hopline_v1_AnswerGatewayClient, AnswerGatewayDefinition as _hopline_v1_AnswerGatewayDefinition } from './hopline/v1/AnswerGateway.js';
import type { AskCommand as _hopline_v1_AskCommand, AskCommand__Output as _hopline_v1_AskCommand__Output } from './hopline/v1/AskCommand.js';
import type { AskRequest as _hopline_v1_AskRequest, AskRequest__Output as _hopline_v1_AskRequest__Output } from './hopline/v1/AskRequest.js';
import type { CancelCommand as _hopline_v1_CancelCommand, CancelCommand__Output as _hopline_v1_CancelCommand__Output } from './hopline/v1/CancelCommand.js';
import type { Chunk as _hopline_v1_Chunk, Chunk__Output as _hopline_v1_Chunk__Output } from './hopline/v1/Chunk.js';
import type { Citation as _hopline_v1_Citation, Citation__Output as _hopline_v1_Citation__Output } from './hopline/v1/Citation.js';
import type { CitationsEvent as _hopline_v1_CitationsEvent, CitationsEvent__Output as _hopline_v1_CitationsEvent__Output } from './hopline/v1/CitationsEvent.js';
import type { Done as _hopline_v1_Done, Done__Output as _hopline_v1_Done__Output } from './hopline/v1/Done.js';
import type { ErrorEvent as _hopline_v1_ErrorEvent, ErrorEvent__Output as _hopline_v1_ErrorEvent__Output } from './hopline/v1/ErrorEvent.js';
import type { HopAnswer as _hopline_v1_HopAnswer, HopAnswer__Output as _hopline_v1_HopAnswer__Output } from './hopline/v1/HopAnswer.js';
import type { HopRecord as _hopline_v1_HopRecord, HopRecord__Output as _hopline_v1_HopRecord__Output } from './hopline/v1/HopRecord.js';
import type { HopStarted as _hopline_v1_HopStarted, HopStarted__Output as _hopline_v1_HopStarted__Output } from './hopline/v1/HopStarted.js';
import type { Kb as _hopline_v1_Kb, Kb__Output as _hopline_v1_Kb__Output } from './hopline/v1/Kb.js';
import type { KbList as _hopline_v1_KbList, KbList__Output as _hopline_v1_KbList__Output } from './hopline/v1/KbList.js';
import type { KbRequest as _hopline_v1_KbRequest, KbRequest__Output as _hopline_v1_KbRequest__Output } from './hopline/v1/KbRequest.js';
import type { KnowledgeBasesClient as _hopline_v1_KnowledgeBasesClient, KnowledgeBasesDefinition as _hopline_v1_KnowledgeBasesDefinition } from './hopline/v1/KnowledgeBases.js';
import type { ListKbsRequest as _hopline_v1_ListKbsRequest, ListKbsRequest__Output as _hopline_v1_ListKbsRequest__Output } from './hopline/v1/ListKbsRequest.js';
import type { OperatorControls as _hopline_v1_OperatorControls, OperatorControls__Output as _hopline_v1_OperatorControls__Output } from './hopline/v1/OperatorControls.js';
import type { QaEvent as _hopline_v1_QaEvent, QaEvent__Output as _hopline_v1_QaEvent__Output } from './hopline/v1/QaEvent.js';
import type { QaEventBatch as _hopline_v1_QaEventBatch, QaEventBatch__Output as _hopline_v1_QaEventBatch__Output } from './hopline/v1/QaEventBatch.js';
import type { QueryUnderstandingClient as _hopline_v1_QueryUnderstandingClient, QueryUnderstandingDefinition as _hopline_v1_QueryUnderstandingDefinition } from './hopline/v1/QueryUnderstanding.js';
import type { ReasoningTrace as _hopline_v1_ReasoningTrace, ReasoningTrace__Output as _hopline_v1_ReasoningTrace__Output } from './hopline/v1/ReasoningTrace.js';
import type { RequestContext as _hopline_v1_RequestContext, RequestContext__Output as _hopline_v1_RequestContext__Output } from './hopline/v1/RequestContext.js';
import type { Restarted as _hopline_v1_Restarted, Restarted__Output as _hopline_v1_Restarted__Output } from './hopline/v1/Restarted.js';
import type { RetrievalEvent as _hopline_v1_RetrievalEvent, RetrievalEvent__Output as _hopline_v1_RetrievalEvent__Output } from './hopline/v1/RetrievalEvent.js';
import type { Scope as _hopline_v1_Scope, Scope__Output as _hopline_v1_Scope__Output } from './hopline/v1/Scope.js';
import type { Scores as _hopline_v1_Scores, Scores__Output as _hopline_v1_Scores__Output } from './hopline/v1/Scores.js';
import type { StageTimings as _hopline_v1_StageTimings, StageTimings__Output as _hopline_v1_StageTimings__Output } from './hopline/v1/StageTimings.js';
import type { SubQuestion as _hopline_v1_SubQuestion, SubQuestion__Output as _hopline_v1_SubQuestion__Output } from './hopline/v1/SubQuestion.js';
import type { TextSpan as _hopline_v1_TextSpan, TextSpan__Output as _hopline_v1_TextSpan__Output } from './hopline/v1/TextSpan.js';
import type { TokenEvent as _hopline_v1_TokenEvent, TokenEvent__Output as _hopline_v1_TokenEvent__Output } from './hopline/v1/TokenEvent.js';
import type { WorkerLag as _hopline_v1_WorkerLag, WorkerLag__Output as _hopline_v1_WorkerLag__Output } from './hopline/v1/WorkerLag.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  hopline: {
    v1: {
      Accepted: MessageTypeDefinition<_hopline_v1_Accepted, _hopline_v1_Accepted__Output>
      Analysis: MessageTypeDefinition<_hopline_v1_Analysis, _hopline_v1_Analysis__Output>
      AnalyzeRequest: MessageTypeDefinition<_hopline_v1_AnalyzeRequest, _hopline_v1_AnalyzeRequest__Output>
      AnswerGateway: SubtypeConstructor<typeof grpc.Client, _hopline_v1_AnswerGatewayClient> & { service: _hopline_v1_AnswerGatewayDefinition }
      AskCommand: MessageTypeDefinition<_hopline_v1_AskCommand, _hopline_v1_AskCommand__Output>
      AskRequest: MessageTypeDefinition<_hopline_v1_AskRequest, _hopline_v1_AskRequest__Output>
      CancelCommand: MessageTypeDefinition<_hopline_v1_CancelCommand, _hopline_v1_CancelCommand__Output>
      Chunk: MessageTypeDefinition<_hopline_v1_Chunk, _hopline_v1_Chunk__Output>
      Citation: MessageTypeDefinition<_hopline_v1_Citation, _hopline_v1_Citation__Output>
      CitationsEvent: MessageTypeDefinition<_hopline_v1_CitationsEvent, _hopline_v1_CitationsEvent__Output>
      DecidedBy: EnumTypeDefinition
      Done: MessageTypeDefinition<_hopline_v1_Done, _hopline_v1_Done__Output>
      ErrorEvent: MessageTypeDefinition<_hopline_v1_ErrorEvent, _hopline_v1_ErrorEvent__Output>
      FoundBy: EnumTypeDefinition
      Grade: EnumTypeDefinition
      HopAnswer: MessageTypeDefinition<_hopline_v1_HopAnswer, _hopline_v1_HopAnswer__Output>
      HopRecord: MessageTypeDefinition<_hopline_v1_HopRecord, _hopline_v1_HopRecord__Output>
      HopStarted: MessageTypeDefinition<_hopline_v1_HopStarted, _hopline_v1_HopStarted__Output>
      Kb: MessageTypeDefinition<_hopline_v1_Kb, _hopline_v1_Kb__Output>
      KbList: MessageTypeDefinition<_hopline_v1_KbList, _hopline_v1_KbList__Output>
      KbRequest: MessageTypeDefinition<_hopline_v1_KbRequest, _hopline_v1_KbRequest__Output>
      KnowledgeBases: SubtypeConstructor<typeof grpc.Client, _hopline_v1_KnowledgeBasesClient> & { service: _hopline_v1_KnowledgeBasesDefinition }
      ListKbsRequest: MessageTypeDefinition<_hopline_v1_ListKbsRequest, _hopline_v1_ListKbsRequest__Output>
      OperatorControls: MessageTypeDefinition<_hopline_v1_OperatorControls, _hopline_v1_OperatorControls__Output>
      QaEvent: MessageTypeDefinition<_hopline_v1_QaEvent, _hopline_v1_QaEvent__Output>
      QaEventBatch: MessageTypeDefinition<_hopline_v1_QaEventBatch, _hopline_v1_QaEventBatch__Output>
      QueryUnderstanding: SubtypeConstructor<typeof grpc.Client, _hopline_v1_QueryUnderstandingClient> & { service: _hopline_v1_QueryUnderstandingDefinition }
      ReasoningTrace: MessageTypeDefinition<_hopline_v1_ReasoningTrace, _hopline_v1_ReasoningTrace__Output>
      RequestContext: MessageTypeDefinition<_hopline_v1_RequestContext, _hopline_v1_RequestContext__Output>
      Restarted: MessageTypeDefinition<_hopline_v1_Restarted, _hopline_v1_Restarted__Output>
      RetrievalEvent: MessageTypeDefinition<_hopline_v1_RetrievalEvent, _hopline_v1_RetrievalEvent__Output>
      Route: EnumTypeDefinition
      Scope: MessageTypeDefinition<_hopline_v1_Scope, _hopline_v1_Scope__Output>
      Scores: MessageTypeDefinition<_hopline_v1_Scores, _hopline_v1_Scores__Output>
      StageTimings: MessageTypeDefinition<_hopline_v1_StageTimings, _hopline_v1_StageTimings__Output>
      StopReason: EnumTypeDefinition
      SubQuestion: MessageTypeDefinition<_hopline_v1_SubQuestion, _hopline_v1_SubQuestion__Output>
      TextSpan: MessageTypeDefinition<_hopline_v1_TextSpan, _hopline_v1_TextSpan__Output>
      TokenEvent: MessageTypeDefinition<_hopline_v1_TokenEvent, _hopline_v1_TokenEvent__Output>
      WorkerLag: MessageTypeDefinition<_hopline_v1_WorkerLag, _hopline_v1_WorkerLag__Output>
    }
  }
}

