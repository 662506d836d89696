// Original file: proto/hopline/v1/query_understanding.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { Analysis as _hopline_v1_Analysis, Analysis__Output as _hopline_v1_Analysis__Output } from '../../hopline/v1/Analysis.js';
import type { AnalyzeRequest as _hopline_v1_AnalyzeRequest, AnalyzeRequest__Output as _hopline_v1_AnalyzeRequest__Output } from '../../hopline/v1/AnalyzeRequest.js';

export interface QueryUnderstandingClient extends grpc.Client {
  Analyze(argument: _hopline_v1_AnalyzeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Analysis__Output>): grpc.ClientUnaryCall;
  Analyze(argument: _hopline_v1_AnalyzeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_Analysis__Output>): grpc.ClientUnaryCall;
  Analyze(argument: _hopline_v1_AnalyzeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Analysis__Output>): grpc.ClientUnaryCall;
  Analyze(argument: _hopline_v1_AnalyzeRequest, callback: grpc.requestCallback<_hopline_v1_Analysis__Output>): grpc.ClientUnaryCall;
  analyze(argument: _hopline_v1_AnalyzeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Analysis__Output>): grpc.ClientUnaryCall;
  analyze(argument: _hopline_v1_AnalyzeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_Analysis__Output>): grpc.ClientUnaryCall;
  analyze(argument: _hopline_v1_AnalyzeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_Analysis__Output>): grpc.ClientUnaryCall;
  analyze(argument: _hopline_v1_AnalyzeRequest, callback: grpc.requestCallback<_hopline_v1_Analysis__Output>): grpc.ClientUnaryCall;
  
}

export interface QueryUnderstandingHandlers extends grpc.UntypedServiceImplementation {
  Analyze: grpc.handleUnaryCall<_hopline_v1_AnalyzeRequest__Output, _hopline_v1_Analysis>;
  
}

export interface QueryUnderstandingDefinition extends grpc.ServiceDefinition {
  Analyze: MethodDefinition<_hopline_v1_AnalyzeRequest, _hopline_v1_Analysis, _hopline_v1_AnalyzeRequest__Output, _hopline_v1_Analysis__Output>
}
