// Original file: proto/hopline/v1/reranker.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { RerankRequest as _hopline_v1_RerankRequest, RerankRequest__Output as _hopline_v1_RerankRequest__Output } from '../../hopline/v1/RerankRequest.js';
import type { RerankResponse as _hopline_v1_RerankResponse, RerankResponse__Output as _hopline_v1_RerankResponse__Output } from '../../hopline/v1/RerankResponse.js';

export interface RerankerClient extends grpc.Client {
  Rerank(argument: _hopline_v1_RerankRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_RerankResponse__Output>): grpc.ClientUnaryCall;
  Rerank(argument: _hopline_v1_RerankRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_RerankResponse__Output>): grpc.ClientUnaryCall;
  Rerank(argument: _hopline_v1_RerankRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_RerankResponse__Output>): grpc.ClientUnaryCall;
  Rerank(argument: _hopline_v1_RerankRequest, callback: grpc.requestCallback<_hopline_v1_RerankResponse__Output>): grpc.ClientUnaryCall;
  rerank(argument: _hopline_v1_RerankRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_RerankResponse__Output>): grpc.ClientUnaryCall;
  rerank(argument: _hopline_v1_RerankRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_hopline_v1_RerankResponse__Output>): grpc.ClientUnaryCall;
  rerank(argument: _hopline_v1_RerankRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_hopline_v1_RerankResponse__Output>): grpc.ClientUnaryCall;
  rerank(argument: _hopline_v1_RerankRequest, callback: grpc.requestCallback<_hopline_v1_RerankResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface RerankerHandlers extends grpc.UntypedServiceImplementation {
  Rerank: grpc.handleUnaryCall<_hopline_v1_RerankRequest__Output, _hopline_v1_RerankResponse>;
  
}

export interface RerankerDefinition extends grpc.ServiceDefinition {
  Rerank: MethodDefinition<_hopline_v1_RerankRequest, _hopline_v1_RerankResponse, _hopline_v1_RerankRequest__Output, _hopline_v1_RerankResponse__Output>
}
