import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { PROTO_LOADER_OPTIONS } from './proto-options.js';
import type { ProtoGrpcType as AnswerGatewayProto } from './generated/answer_gateway.js';
import type { ProtoGrpcType as QueryUnderstandingProto } from './generated/query_understanding.js';
import type { ProtoGrpcType as RerankerProto } from './generated/reranker.js';

// Resolves from both src/ and dist/, which sit at the same depth.
export const PROTO_ROOT = fileURLToPath(new URL('../../../proto', import.meta.url));

export const PROTO_FILES: readonly string[] = readdirSync(`${PROTO_ROOT}/hopline/v1`)
  .filter((name) => name.endsWith('.proto'))
  .sort()
  .map((name) => `hopline/v1/${name}`);

export type HoplineGrpc = AnswerGatewayProto & QueryUnderstandingProto & RerankerProto;

let grpcPackage: HoplineGrpc | undefined;

/** The gRPC service constructors and definitions of every Hopline proto. */
export function loadHoplineGrpc(): HoplineGrpc {
  grpcPackage ??= grpc.loadPackageDefinition(
    protoLoader.loadSync([...PROTO_FILES], { ...PROTO_LOADER_OPTIONS, includeDirs: [PROTO_ROOT] }),
  ) as unknown as HoplineGrpc;
  return grpcPackage;
}

let protobufRoot: protobuf.Root | undefined;

/** The protobufjs root the NATS codecs use, loaded from the same files as gRPC. */
export function loadProtobufRoot(): protobuf.Root {
  if (!protobufRoot) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => `${PROTO_ROOT}/${target}`;
    root.loadSync([...PROTO_FILES], { keepCase: PROTO_LOADER_OPTIONS.keepCase });
    root.resolveAll();
    protobufRoot = root;
  }
  return protobufRoot;
}
