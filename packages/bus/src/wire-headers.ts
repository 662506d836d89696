import { MsgHdrsImpl, type MsgHdrs } from 'nats';
import type { BusHeaders } from './bus.js';
import { fromNatsError } from './nats-errors.js';

/**
 * Headers go through nats.js's own header implementation in both adapters, so that key
 * validation, value trimming and the wire encoding are exactly what a NATS server sees.
 */
export function toMsgHdrs(record: Readonly<BusHeaders> | undefined): MsgHdrsImpl | undefined {
  if (record === undefined) return undefined;
  const entries = Object.entries(record);
  if (entries.length === 0) return undefined;
  const hdrs = new MsgHdrsImpl();
  try {
    for (const [key, value] of entries) hdrs.set(key, value);
  } catch (error) {
    throw fromNatsError(error, { operation: 'set headers' });
  }
  return hdrs;
}

/** One value per key (the first), as every Hopline header is single-valued. */
export function fromMsgHdrs(hdrs: MsgHdrs | undefined): BusHeaders {
  const record: BusHeaders = {};
  if (hdrs === undefined) return record;
  for (const key of hdrs.keys()) record[key] = hdrs.get(key);
  return record;
}

/** The bytes a NATS client would put on the wire for these headers (empty when there are none). */
export function encodeHeaders(record: Readonly<BusHeaders> | undefined): Uint8Array {
  return toMsgHdrs(record)?.encode() ?? new Uint8Array(0);
}

export function decodeHeaders(bytes: Uint8Array): BusHeaders {
  return bytes.length === 0 ? {} : fromMsgHdrs(MsgHdrsImpl.decode(bytes));
}
