// Original file: proto/hopline/v1/answer_gateway.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AskRequest as _hopline_v1_AskRequest, AskRequest__Output as _hopline_v1_AskRequest__Output } from '../../hopline/v1/AskRequest.js';
import type { QaEvent as _hopline_v1_QaEvent, QaEvent__Output as _hopline_v1_QaEvent__Output } from '../../hopline/v1/QaEvent.js';

export interface AnswerGatewayClient extends grpc.Client {
  Ask(argument: _hopline_v1_AskRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_hopline_v1_QaEvent__Output>;
  Ask(argument: _hopline_v1_AskRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_hopline_v1_QaEvent__Output>;
  ask(argument: _hopline_v1_AskRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_hopline_v1_QaEvent__Output>;
  ask(argument: _hopline_v1_AskRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_hopline_v1_QaEvent__Output>;
  
}

export interface AnswerGatewayHandlers extends grpc.UntypedServiceImplementation {
  Ask: grpc.handleServerStreamingCall<_hopline_v1_AskRequest__Output, _hopline_v1_QaEvent>;
  
}

export interface AnswerGatewayDefinition extends grpc.ServiceDefinition {
  Ask: MethodDefinition<_hopline_v1_AskRequest, _hopline_v1_QaEvent, _hopline_v1_AskRequest__Output, _hopline_v1_QaEvent__Output>
}
