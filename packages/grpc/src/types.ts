import type * as grpc from '@grpc/grpc-js';

/** A generated service client constructor, e.g. `loadHoplineGrpc().hopline.v1.Reranker`. */
export type ServiceConstructor<C extends grpc.Client = grpc.Client> = (new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => C) & { service: grpc.ServiceDefinition };

/** The keys a type names itself, without those its index signature would add. */
type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/** What a handler's call carries besides the request. */
export interface CallContext {
  /** Aborts when the client cancels, the client's deadline passes, or the server is forced down. */
  signal: AbortSignal;
  /** The client's deadline in ms since the Unix epoch; Infinity when it set none. */
  deadlineUnixMs: number;
  metadata: grpc.Metadata;
  peer: string;
}

export type UnaryHandler<Request, Response> = (request: Request, call: CallContext) => Promise<Response>;

export interface StreamWriter<Response> extends CallContext {
  /**
   * Sends one message. Resolves at once while the transport buffer has room, otherwise when it
   * drains; rejects with the abort reason when the call ends first.
   */
  write(message: Response): Promise<void>;
}

export type ServerStreamHandler<Request, Response> = (
  request: Request,
  stream: StreamWriter<Response>,
) => Promise<void>;

type RequestOf<M> = M extends { requestDeserialize: (bytes: Buffer) => infer Request } ? Request : never;
type ResponseOf<M> = M extends { responseSerialize: (value: infer Response) => Buffer } ? Response : never;

/** A service's handlers, typed from its generated constructor: server-streaming methods write, unary ones return. */
export type HandlersOf<S extends ServiceConstructor> = {
  [K in KnownKeys<S['service']> & string]: InstanceType<S>[K & keyof InstanceType<S>] extends (
    ...args: never[]
  ) => grpc.ClientReadableStream<unknown>
    ? ServerStreamHandler<RequestOf<S['service'][K]>, ResponseOf<S['service'][K]>>
    : UnaryHandler<RequestOf<S['service'][K]>, ResponseOf<S['service'][K]>>;
};

/** Names of a client's unary methods (`Rerank`, `rerank`). */
export type UnaryMethodName<C> = {
  [K in keyof C & string]: C[K] extends (argument: never, callback: never) => grpc.ClientUnaryCall ? K : never;
}[keyof C & string];

// Generated clients list the (argument, callback) overload last, which is the one `infer` reads.
export type UnaryRequest<C, K extends keyof C> = C[K] extends (
  argument: infer Request,
  callback: never,
) => grpc.ClientUnaryCall
  ? Request
  : never;
export type UnaryResponse<C, K extends keyof C> = C[K] extends (
  argument: never,
  callback: grpc.requestCallback<infer Response>,
) => grpc.ClientUnaryCall
  ? Response
  : never;
