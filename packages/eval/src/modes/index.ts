import type { EvalMode } from './mode.js';
import { multihopMode } from '../multihop/multihop-mode.js';
import { singleMode } from './single.js';

/** The modes `--mode` can name; a new mode registers here. */
export const evalModes: ReadonlyMap<string, EvalMode> = new Map([
  [singleMode.name, singleMode],
  [multihopMode.name, multihopMode],
]);
