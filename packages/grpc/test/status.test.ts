import * as grpc from '@grpc/grpc-js';
import { CancelledError, DeadlineExceededError, HoplineError, RemoteError, UnavailableError } from '@hopline/contracts';
import { describe, expect, it } from 'vitest';
import {
  ERROR_CODE_METADATA_KEY,
  fromGrpcError,
  grpcStatusName,
  RETRY_AFTER_METADATA_KEY,
  toGrpcStatus,
} from '../src/index.js';

const withTrailer = (code: string) => {
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_CODE_METADATA_KEY, code);
  return metadata;
};

describe('gRPC status mapping', () => {
  it('status - transport statuses without a Hopline code become local errors', () => {
    expect(fromGrpcError({ code: grpc.status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' })).toBeInstanceOf(
      DeadlineExceededError,
    );
    expect(fromGrpcError({ code: grpc.status.UNAVAILABLE, details: 'No connection established' })).toBeInstanceOf(
      UnavailableError,
    );
    expect(
      fromGrpcError({ code: grpc.status.CANCELLED, details: 'Call cancelled' }, { cancelledHere: true }),
    ).toBeInstanceOf(CancelledError);
  });

  it('status - CANCELLED that this side did not ask for means the server dropped the call', () => {
    const error = fromGrpcError({ code: grpc.status.CANCELLED, details: 'Call cancelled' });
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.remote).toBe(false);
  });

  it('status - other statuses without a trailer become RemoteErrors with the nearest code', () => {
    expect(fromGrpcError({ code: grpc.status.NOT_FOUND, details: 'x' })).toMatchObject({
      code: 'not_found',
      remote: true,
    });
    expect(fromGrpcError({ code: grpc.status.UNIMPLEMENTED, details: 'x' })).toMatchObject({
      code: 'internal',
      remote: true,
    });
    expect(fromGrpcError({ code: grpc.status.FAILED_PRECONDITION, details: 'x' })).toMatchObject({
      code: 'invalid_argument',
      remote: true,
    });
    expect(fromGrpcError({ code: grpc.status.UNKNOWN, details: 'x' })).toMatchObject({
      code: 'internal',
      remote: true,
    });
  });

  it('status - a Hopline code in the trailers wins over the status, as a relayed RemoteError', () => {
    const error = fromGrpcError({
      code: grpc.status.UNAVAILABLE,
      details: 'retrieval-worker has no responders',
      metadata: withTrailer('no_responders'),
    });
    expect(error).toBeInstanceOf(RemoteError);
    expect(error).toMatchObject({ code: 'no_responders', remote: true, message: 'retrieval-worker has no responders' });
  });

  it('status - a trailer that is not a Hopline code is ignored', () => {
    expect(
      fromGrpcError({ code: grpc.status.UNAVAILABLE, details: 'x', metadata: withTrailer('teapot') }),
    ).toBeInstanceOf(UnavailableError);
  });

  it('status - toGrpcStatus maps each code and carries it in the trailers; unknown errors are INTERNAL', () => {
    const status = toGrpcStatus(new HoplineError('breaker_open', 'reranker breaker open'));
    expect(status.code).toBe(grpc.status.UNAVAILABLE);
    expect(status.details).toBe('reranker breaker open');
    expect(status.metadata.get(ERROR_CODE_METADATA_KEY)).toEqual(['breaker_open']);
    expect(toGrpcStatus(new Error('boom'))).toMatchObject({ code: grpc.status.INTERNAL, details: 'boom' });
    expect(grpcStatusName(grpc.status.RESOURCE_EXHAUSTED)).toBe('RESOURCE_EXHAUSTED');
  });

  it('status - an error that knows when to retry carries retry-after in whole seconds, at least 1', () => {
    const after = (retryAfterMs?: number) =>
      toGrpcStatus(
        new HoplineError('resource_exhausted', 'slow down', retryAfterMs === undefined ? {} : { retryAfterMs }),
      ).metadata.get(RETRY_AFTER_METADATA_KEY);
    expect(after(2_500)).toEqual(['3']);
    expect(after(10)).toEqual(['1']);
    expect(after()).toEqual([]);
  });

  it('status - the retry-after a handler sent comes back as the RemoteError retryAfterMs; none, or an unreadable one, as undefined', () => {
    const relayed = (error: HoplineError) => fromGrpcError({ ...toGrpcStatus(error) });
    expect(relayed(new HoplineError('resource_exhausted', 'slow down', { retryAfterMs: 2_500 }))).toMatchObject({
      code: 'resource_exhausted',
      remote: true,
      retryAfterMs: 3_000,
    });
    expect(relayed(new HoplineError('resource_exhausted', 'slow down')).retryAfterMs).toBeUndefined();
    const unreadable = withTrailer('unavailable');
    unreadable.set(RETRY_AFTER_METADATA_KEY, 'soon');
    expect(
      fromGrpcError({ code: grpc.status.UNAVAILABLE, details: 'x', metadata: unreadable }).retryAfterMs,
    ).toBeUndefined();
  });
});
