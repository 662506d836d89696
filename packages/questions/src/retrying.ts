import { isHoplineError } from '@hopline/contracts';

// While NATS is unreachable a call is retried this often (a write with the same message id).
const RETRY_MS = 250;

/** Transient: the call may succeed when NATS answers again. */
const isTransient = (error: unknown) =>
  isHoplineError(error) && (error.code === 'unavailable' || error.code === 'deadline_exceeded');

/** Runs `call`, again after each transient failure until `untilUnixMs`; then its failure is the caller's. */
export async function retrying<T>(call: () => Promise<T>, untilUnixMs: number): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!isTransient(error) || Date.now() >= untilUnixMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}
