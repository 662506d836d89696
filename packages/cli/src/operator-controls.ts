import type { KeyValueStore } from '@hopline/bus';
import {
  decodeOperatorControls,
  DEFAULT_OPERATOR_CONTROLS,
  encodeOperatorControls,
  jetstream,
  type OperatorControls__Output,
} from '@hopline/contracts';

/** The operators' controls the bucket holds now: the defaults while nobody has set them. */
export async function readOperatorControls(bucket: KeyValueStore): Promise<OperatorControls__Output> {
  const value = await bucket.get(jetstream.controlsKey);
  return value === undefined ? DEFAULT_OPERATOR_CONTROLS : decodeOperatorControls(value);
}

/**
 * Changes the controls named in `change`, keeping the others, and returns what is now in force:
 * the hop-reasoners watching the bucket apply it to the questions they start next.
 */
export async function changeOperatorControls(
  bucket: KeyValueStore,
  change: Partial<OperatorControls__Output>,
): Promise<OperatorControls__Output> {
  // A compare-and-set: another operator changing another control between the read and the write
  // would have that change put back by a plain put. The write is refused when the stored value is
  // no longer the one read, and the change is made again on the new value. Each refusal means
  // another operator's write went in, so the loop ends.
  for (;;) {
    const read = await bucket.get(jetstream.controlsKey);
    const next = { ...(read === undefined ? DEFAULT_OPERATOR_CONTROLS : decodeOperatorControls(read)), ...change };
    const changedSince = (stored: Uint8Array) => read === undefined || !Buffer.from(stored).equals(read);
    if (await bucket.putUnless(jetstream.controlsKey, encodeOperatorControls(next), changedSince)) return next;
  }
}
