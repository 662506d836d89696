import { codecs } from './codec.js';
import { ValidationError } from './errors.js';
import type { OperatorControls__Output } from './generated/hopline/v1/OperatorControls.js';

/** No question takes more hops than this, whatever the ask or the controls say. */
const HOP_CAP_LIMIT = 5;

/** What holds while nobody has set the controls: multi-hop on, hops capped by the hard limit only. */
export const DEFAULT_OPERATOR_CONTROLS: OperatorControls__Output = { multiHop: true, hopCap: HOP_CAP_LIMIT };

/** Controls as the bucket holds them, encoded; refuses a hop cap outside 1..5. */
export function encodeOperatorControls(controls: OperatorControls__Output): Uint8Array {
  return codecs.operatorControls.encode(validOperatorControls(controls));
}

/** The controls a bucket value holds; a malformed value or a hop cap outside 1..5 is a ValidationError. */
export function decodeOperatorControls(bytes: Uint8Array): OperatorControls__Output {
  return validOperatorControls(codecs.operatorControls.decode(bytes));
}

function validOperatorControls(controls: OperatorControls__Output): OperatorControls__Output {
  if (!Number.isInteger(controls.hopCap) || controls.hopCap < 1 || controls.hopCap > HOP_CAP_LIMIT) {
    throw new ValidationError(`the hop cap must be a whole number from 1 to ${HOP_CAP_LIMIT}, got ${controls.hopCap}`);
  }
  return { multiHop: controls.multiHop, hopCap: controls.hopCap };
}
