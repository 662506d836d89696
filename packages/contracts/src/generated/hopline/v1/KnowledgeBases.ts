// Original file: proto/hopline/v1/answer_gateway.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { Kb as _hopline_v1_Kb, Kb__Output as _hopline_v1_Kb__Output } from '../../hopline/v1/Kb.js';
import type { KbList as _hopline_v1_KbList, KbList__Output as _hopline_v1_KbList__Output } from '../../hopline/v1/KbList.js';
import type { KbRequest as _hopline_v1_KbRequest, KbRequest__Output as _hopline_v1_KbRequest__Output } from '../../hopline/v1/KbRequest.js';
import type { ListKbsRequest as _hopline_v1_ListKbsRequest, ListKbsRequest__Output as _hopline_v1_ListKbsRequest__Output } from '../../hopline/v1/ListKbsRequest.js';

export interface KnowledgeBasesClient extends grpc.Client {
  CreateKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  CreateKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  CreateKb(argument: _hopline_v1_KbRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  CreateKb(argument: _hopline_v1_KbRequest, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  createKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  createKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  createKb(argument: _hopline_v1_KbRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  createKb(argument: _hopline_v1_KbRequest, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  
  DeleteKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  DeleteKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  DeleteKb(argument: _hopline_v1_KbRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  DeleteKb(argument: _hopline_v1_KbRequest, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  deleteKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  deleteKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  deleteKb(argument: _hopline_v1_KbRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  deleteKb(argument: _hopline_v1_KbRequest, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  
  GetKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  GetKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  GetKb(argument: _hopline_v1_KbRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  GetKb(argument: _hopline_v1_KbRequest, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  getKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  getKb(argument: _hopline_v1_KbRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  getKb(argument: _hopline_v1_KbRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  getKb(argument: _hopline_v1_KbRequest, callback: grpc.requestCallback<_hopline_v1_Kb__Output>): grpc.ClientUnaryCall;
  
  ListKbs(argument: _hopline_v1_ListKbsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_KbList__Output>): grpc.ClientUnaryCall;
  ListKbs(argument: _hopline_v1_ListKbsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_KbList__Output>): grpc.ClientUnaryCall;
  ListKbs(argument: _hopline_v1_ListKbsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_KbList__Output>): grpc.ClientUnaryCall;
  ListKbs(argument: _hopline_v1_ListKbsRequest, callback: grpc.requestCallback<_hopline_v1_KbList__Output>): grpc.ClientUnaryCall;
  listKbs(argument: _hopline_v1_ListKbsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_KbList__Output>): grpc.ClientUnaryCall;
  listKbs(argument: _hopline_v1_ListKbsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_KbList__Output>): grpc.ClientUnaryCall;
  listKbs(argument: _hopline_v1_ListKbsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_KbList__Output>): grpc.ClientUnaryCall;
  listKbs(argument: _hopline_v1_ListKbsRequest, callback: grpc.requestCallback<_hopline_v1_KbList__Output>): grpc.ClientUnaryCall;
  
}

export interface KnowledgeBasesHandlers extends grpc.UntypedServiceImplementation {
  CreateKb: grpc.handleUnaryCall<_hopline_v1_KbRequest__Output, _hopline_v1_Kb>;
  
  DeleteKb: grpc.handleUnaryCall<_hopline_v1_KbRequest__Output, _hopline_v1_Kb>;
  
  GetKb: grpc.handleUnaryCall<_hopline_v1_KbRequest__Output, _hopline_v1_Kb>;
  
  ListKbs: grpc.handleUnaryCall<_hopline_v1_ListKbsRequest__Output, _hopline_v1_KbList>;
  
}

export interface KnowledgeBasesDefinition extends grpc.ServiceDefinition {
  CreateKb: MethodDefinition<_hopline_v1_KbRequest, _hopline_v1_Kb, _hopline_v1_KbRequest__Output, _hopline_v1_Kb__Output>
  DeleteKb: MethodDefinition<_hopline_v1_KbRequest, _hopline_v1_Kb, _hopline_v1_KbRequest__Output, _hopline_v1_Kb__Output>
  GetKb: MethodDefinition<_hopline_v1_KbRequest, _hopline_v1_Kb, _hopline_v1_KbRequest__Output, _hopline_v1_Kb__Output>
  ListKbs: MethodDefinition<_hopline_v1_ListKbsRequest, _hopline_v1_KbList, _hopline_v1_ListKbsRequest__Output, _hopline_v1_KbList__Output>
}
