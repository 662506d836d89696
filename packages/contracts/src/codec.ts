import type protobuf from 'protobufjs';
import { ValidationError } from './errors.js';
import { loadProtobufRoot } from './proto.js';
import { PROTO_LOADER_OPTIONS } from './proto-options.js';
import type { AskCommand, AskCommand__Output } from './generated/hopline/v1/AskCommand.js';
import type { CancelCommand, CancelCommand__Output } from './generated/hopline/v1/CancelCommand.js';
import type { DeadLetter, DeadLetter__Output } from './generated/hopline/v1/DeadLetter.js';
import type { DocumentLookup, DocumentLookup__Output } from './generated/hopline/v1/DocumentLookup.js';
import type { DocumentState, DocumentState__Output } from './generated/hopline/v1/DocumentState.js';
import type { IngestCommand, IngestCommand__Output } from './generated/hopline/v1/IngestCommand.js';
import type { KbChanged, KbChanged__Output } from './generated/hopline/v1/KbChanged.js';
import type { KbRecord, KbRecord__Output } from './generated/hopline/v1/KbRecord.js';
import type { KbStatsRequest, KbStatsRequest__Output } from './generated/hopline/v1/KbStatsRequest.js';
import type { KbStatsResponse, KbStatsResponse__Output } from './generated/hopline/v1/KbStatsResponse.js';
import type { OperatorControls, OperatorControls__Output } from './generated/hopline/v1/OperatorControls.js';
import type { QaEvent, QaEvent__Output } from './generated/hopline/v1/QaEvent.js';
import type { QaEventBatch, QaEventBatch__Output } from './generated/hopline/v1/QaEventBatch.js';
import type { ReasoningTrace, ReasoningTrace__Output } from './generated/hopline/v1/ReasoningTrace.js';
import type { RetrieveRequest, RetrieveRequest__Output } from './generated/hopline/v1/RetrieveRequest.js';
import type { RetrieveResponse, RetrieveResponse__Output } from './generated/hopline/v1/RetrieveResponse.js';
import type { WorkerPresence, WorkerPresence__Output } from './generated/hopline/v1/WorkerPresence.js';

/** Encodes a message for the wire and decodes it into the same shape gRPC hands out. */
export interface Codec<In, Out> {
  readonly typeName: string;
  encode(message: In): Uint8Array;
  decode(bytes: Uint8Array): Out;
  /**
   * What `decode(encode(message))` returns, and the bytes `encode` would write, without writing
   * them: for a message handed over within one process. The same value, since these messages
   * have no `float` field (which the wire would round to 32 bits); a string with a lone
   * surrogate keeps it rather than reading back U+FFFD.
   */
  asDecoded(message: In): { value: Out; byteLength: number };
}

const TO_OBJECT_OPTIONS: protobuf.IConversionOptions = {
  longs: PROTO_LOADER_OPTIONS.longs,
  enums: PROTO_LOADER_OPTIONS.enums,
  defaults: PROTO_LOADER_OPTIONS.defaults,
  oneofs: PROTO_LOADER_OPTIONS.oneofs,
};

function codecFor<In, Out>(typeName: string): Codec<In, Out> {
  let type: protobuf.Type | undefined;
  const resolve = (): protobuf.Type => (type ??= loadProtobufRoot().lookupType(typeName));
  return {
    typeName,
    encode(message) {
      const t = resolve();
      return t.encode(t.fromObject(message as Record<string, unknown>)).finish();
    },
    asDecoded(message) {
      const t = resolve();
      const built = t.fromObject(message as Record<string, unknown>);
      // The writer's length once every field is queued: finish() would allocate and copy that many.
      return { value: t.toObject(built, TO_OBJECT_OPTIONS) as Out, byteLength: t.encode(built).len };
    },
    decode(bytes) {
      const t = resolve();
      // protobufjs reads a Buffer several times faster than a plain Uint8Array, and nats.js
      // hands out plain Uint8Arrays: view the same memory as a Buffer, without copying.
      const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      try {
        return t.toObject(t.decode(buffer), TO_OBJECT_OPTIONS) as Out;
      } catch (error) {
        throw new ValidationError(`malformed ${typeName} payload: ${(error as Error).message}`, { cause: error });
      }
    },
  };
}

/** Every payload that travels on NATS, one codec each. */
export const codecs = {
  askCommand: codecFor<AskCommand, AskCommand__Output>('hopline.v1.AskCommand'),
  cancelCommand: codecFor<CancelCommand, CancelCommand__Output>('hopline.v1.CancelCommand'),
  qaEvent: codecFor<QaEvent, QaEvent__Output>('hopline.v1.QaEvent'),
  qaEventBatch: codecFor<QaEventBatch, QaEventBatch__Output>('hopline.v1.QaEventBatch'),
  retrieveRequest: codecFor<RetrieveRequest, RetrieveRequest__Output>('hopline.v1.RetrieveRequest'),
  retrieveResponse: codecFor<RetrieveResponse, RetrieveResponse__Output>('hopline.v1.RetrieveResponse'),
  workerPresence: codecFor<WorkerPresence, WorkerPresence__Output>('hopline.v1.WorkerPresence'),
  documentLookup: codecFor<DocumentLookup, DocumentLookup__Output>('hopline.v1.DocumentLookup'),
  documentState: codecFor<DocumentState, DocumentState__Output>('hopline.v1.DocumentState'),
  ingestCommand: codecFor<IngestCommand, IngestCommand__Output>('hopline.v1.IngestCommand'),
  deadLetter: codecFor<DeadLetter, DeadLetter__Output>('hopline.v1.DeadLetter'),
  kbChanged: codecFor<KbChanged, KbChanged__Output>('hopline.v1.KbChanged'),
  kbStatsRequest: codecFor<KbStatsRequest, KbStatsRequest__Output>('hopline.v1.KbStatsRequest'),
  kbStatsResponse: codecFor<KbStatsResponse, KbStatsResponse__Output>('hopline.v1.KbStatsResponse'),
  kbRecord: codecFor<KbRecord, KbRecord__Output>('hopline.v1.KbRecord'),
  reasoningTrace: codecFor<ReasoningTrace, ReasoningTrace__Output>('hopline.v1.ReasoningTrace'),
  operatorControls: codecFor<OperatorControls, OperatorControls__Output>('hopline.v1.OperatorControls'),
} as const;
