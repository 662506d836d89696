import type { Bus } from '@hopline/bus';
import {
  decodeOperatorControls,
  DEFAULT_OPERATOR_CONTROLS,
  jetstream,
  type OperatorControls__Output,
} from '@hopline/contracts';

export interface OperatorControlsWatch {
  /** The controls in force now. */
  current(): OperatorControls__Output;
  stop(): void;
}

/** Where the watch reports: a service's logger fits. */
interface ControlsLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * Follows the operators' controls in their JetStream key-value bucket (`pnpm controls` sets
 * them): the hop-reasoners reason under them, the gateways key cached answers by them, each
 * seeing a change without a restart. No value means the defaults; a value that does not decode
 * or holds an impossible hop cap is logged and ignored, keeping the controls in force.
 * `onChange` hears the controls in force at the start and after each change.
 */
export async function watchOperatorControls(deps: {
  bus: Bus;
  logger: ControlsLog;
  onChange?: (controls: OperatorControls__Output) => void;
}): Promise<OperatorControlsWatch> {
  const { logger } = deps;
  let current = DEFAULT_OPERATOR_CONTROLS;
  const apply = (controls: OperatorControls__Output) => {
    current = controls;
    deps.onChange?.(controls);
    logger.info('operator controls in force', { multiHop: controls.multiHop, hopCap: controls.hopCap });
  };
  const bucket = await deps.bus.keyValue({ bucket: jetstream.controlsBucket, retention: 'keep' });
  const watch = await bucket.watch(jetstream.controlsKey, (value) => {
    if (value === undefined) return apply(DEFAULT_OPERATOR_CONTROLS);
    try {
      apply(decodeOperatorControls(value));
    } catch (error) {
      logger.warn('operator controls ignored: the bucket holds an invalid value; the controls in force stay', {
        error,
      });
    }
  });
  return { current: () => current, stop: () => watch.stop() };
}
