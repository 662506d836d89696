import { singleMode } from './baselines.js';
import type { EvalMode } from './mode.js';
import { multihopMode } from './multihop.js';

/** The modes `--mode` can name; a new mode registers here. */
export const evalModes: ReadonlyMap<string, EvalMode> = new Map([
  [singleMode.name, singleMode],
  [multihopMode.name, multihopMode],
]);
