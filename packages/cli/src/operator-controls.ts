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
  const next = { ...(await readOperatorControls(bucket)), ...change };
  await bucket.put(jetstream.controlsKey, encodeOperatorControls(next));
  return next;
}
