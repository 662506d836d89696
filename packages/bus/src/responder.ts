import { HoplineError, toHoplineError } from '@hopline/contracts';
import type { BusMessage, Endpoint, Reply } from './bus.js';
import { errorEnvelope } from './envelope.js';

const EMPTY = new Uint8Array(0);

/**
 * Runs an endpoint's handler and sends exactly one reply: its result, or the error envelope of
 * what it threw. A reply the server refuses (over the max payload, a bad header) is replaced
 * by an error envelope, so that the requester never waits for its timeout because of it.
 * Resolves with the handler's failure, if it failed, for the endpoint's statistics.
 */
export async function answerRequest(
  endpoint: Endpoint,
  request: BusMessage,
  send: (reply: Reply) => void,
  report: (error: unknown) => void,
): Promise<HoplineError | undefined> {
  let reply: Reply;
  let failure: HoplineError | undefined;
  try {
    reply = await endpoint.handle(request);
  } catch (error) {
    failure = toHoplineError(error);
    reply = { data: EMPTY, headers: errorEnvelope(failure) };
  }
  try {
    send(reply);
  } catch (error) {
    report(error);
    const unsent = new HoplineError(
      'internal',
      `the reply of ${endpoint.name} could not be sent: ${(error as Error).message}`,
      { cause: error },
    );
    try {
      send({ data: EMPTY, headers: errorEnvelope(unsent) });
    } catch (secondError) {
      report(secondError);
    }
    return failure ?? unsent;
  }
  return failure;
}
