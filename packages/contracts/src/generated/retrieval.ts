import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { Chunk as _hopline_v1_Chunk, Chunk__Output as _hopline_v1_Chunk__Output } from './hopline/v1/Chunk.js';
import type { DeadLetter as _hopline_v1_DeadLetter, DeadLetter__Output as _hopline_v1_DeadLetter__Output } from './hopline/v1/DeadLetter.js';
import type { Document as _hopline_v1_Document, Document__Output as _hopline_v1_Document__Output } from './hopline/v1/Document.js';
import type { DocumentLayout as _hopline_v1_DocumentLayout, DocumentLayout__Output as _hopline_v1_DocumentLayout__Output } from './hopline/v1/DocumentLayout.js';
import type { DocumentLookup as _hopline_v1_DocumentLookup, DocumentLookup__Output as _hopline_v1_DocumentLookup__Output } from './hopline/v1/DocumentLookup.js';
import type { DocumentRef as _hopline_v1_DocumentRef, DocumentRef__Output as _hopline_v1_DocumentRef__Output } from './hopline/v1/DocumentRef.js';
import type { DocumentSection as _hopline_v1_DocumentSection, DocumentSection__Output as _hopline_v1_DocumentSection__Output } from './hopline/v1/DocumentSection.js';
import type { DocumentState as _hopline_v1_DocumentState, DocumentState__Output as _hopline_v1_DocumentState__Output } from './hopline/v1/DocumentState.js';
import type { IngestCommand as _hopline_v1_IngestCommand, IngestCommand__Output as _hopline_v1_IngestCommand__Output } from './hopline/v1/IngestCommand.js';
import type { KbChanged as _hopline_v1_KbChanged, KbChanged__Output as _hopline_v1_KbChanged__Output } from './hopline/v1/KbChanged.js';
import type { KbRecord as _hopline_v1_KbRecord, KbRecord__Output as _hopline_v1_KbRecord__Output } from './hopline/v1/KbRecord.js';
import type { KbStats as _hopline_v1_KbStats, KbStats__Output as _hopline_v1_KbStats__Output } from './hopline/v1/KbStats.js';
import type { KbStatsRequest as _hopline_v1_KbStatsRequest, KbStatsRequest__Output as _hopline_v1_KbStatsRequest__Output } from './hopline/v1/KbStatsRequest.js';
import type { KbStatsResponse as _hopline_v1_KbStatsResponse, KbStatsResponse__Output as _hopline_v1_KbStatsResponse__Output } from './hopline/v1/KbStatsResponse.js';
import type { RequestContext as _hopline_v1_RequestContext, RequestContext__Output as _hopline_v1_RequestContext__Output } from './hopline/v1/RequestContext.js';
import type { RetrievalTimings as _hopline_v1_RetrievalTimings, RetrievalTimings__Output as _hopline_v1_RetrievalTimings__Output } from './hopline/v1/RetrievalTimings.js';
import type { RetrieveRequest as _hopline_v1_RetrieveRequest, RetrieveRequest__Output as _hopline_v1_RetrieveRequest__Output } from './hopline/v1/RetrieveRequest.js';
import type { RetrieveResponse as _hopline_v1_RetrieveResponse, RetrieveResponse__Output as _hopline_v1_RetrieveResponse__Output } from './hopline/v1/RetrieveResponse.js';
import type { Scope as _hopline_v1_Scope, Scope__Output as _hopline_v1_Scope__Output } from './hopline/v1/Scope.js';
import type { Scores as _hopline_v1_Scores, Scores__Output as _hopline_v1_Scores__Output } from './hopline/v1/Scores.js';
import type { TextSpan as _hopline_v1_TextSpan, TextSpan__Output as _hopline_v1_TextSpan__Output } from './hopline/v1/TextSpan.js';
import type { WorkerPresence as _hopline_v1_WorkerPresence, WorkerPresence__Output as _hopline_v1_WorkerPresence__Output } from './hopline/v1/WorkerPresence.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  hopline: {
    v1: {
      Chunk: MessageTypeDefinition<_hopline_v1_Chunk, _hopline_v1_Chunk__Output>
      DeadLetter: MessageTypeDefinition<_hopline_v1_DeadLetter, _hopline_v1_DeadLetter__Output>
      Document: MessageTypeDefinition<_hopline_v1_Document, _hopline_v1_Document__Output>
      DocumentLayout: MessageTypeDefinition<_hopline_v1_DocumentLayout, _hopline_v1_DocumentLayout__Output>
      DocumentLookup: MessageTypeDefinition<_hopline_v1_DocumentLookup, _hopline_v1_DocumentLookup__Output>
      DocumentRef: MessageTypeDefinition<_hopline_v1_DocumentRef, _hopline_v1_DocumentRef__Output>
      DocumentSection: MessageTypeDefinition<_hopline_v1_DocumentSection, _hopline_v1_DocumentSection__Output>
      DocumentState: MessageTypeDefinition<_hopline_v1_DocumentState, _hopline_v1_DocumentState__Output>
      FoundBy: EnumTypeDefinition
      IngestCommand: MessageTypeDefinition<_hopline_v1_IngestCommand, _hopline_v1_IngestCommand__Output>
      KbChanged: MessageTypeDefinition<_hopline_v1_KbChanged, _hopline_v1_KbChanged__Output>
      KbRecord: MessageTypeDefinition<_hopline_v1_KbRecord, _hopline_v1_KbRecord__Output>
      KbStats: MessageTypeDefinition<_hopline_v1_KbStats, _hopline_v1_KbStats__Output>
      KbStatsRequest: MessageTypeDefinition<_hopline_v1_KbStatsRequest, _hopline_v1_KbStatsRequest__Output>
      KbStatsResponse: MessageTypeDefinition<_hopline_v1_KbStatsResponse, _hopline_v1_KbStatsResponse__Output>
      RequestContext: MessageTypeDefinition<_hopline_v1_RequestContext, _hopline_v1_RequestContext__Output>
      RetrievalTimings: MessageTypeDefinition<_hopline_v1_RetrievalTimings, _hopline_v1_RetrievalTimings__Output>
      RetrieveRequest: MessageTypeDefinition<_hopline_v1_RetrieveRequest, _hopline_v1_RetrieveRequest__Output>
      RetrieveResponse: MessageTypeDefinition<_hopline_v1_RetrieveResponse, _hopline_v1_RetrieveResponse__Output>
      Scope: MessageTypeDefinition<_hopline_v1_Scope, _hopline_v1_Scope__Output>
      Scores: MessageTypeDefinition<_hopline_v1_Scores, _hopline_v1_Scores__Output>
      TextSpan: MessageTypeDefinition<_hopline_v1_TextSpan, _hopline_v1_TextSpan__Output>
      WorkerPresence: MessageTypeDefinition<_hopline_v1_WorkerPresence, _hopline_v1_WorkerPresence__Output>
    }
  }
}

