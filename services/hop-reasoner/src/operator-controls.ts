import type { Bus } from '@hopline/bus';
import {
  decodeOperatorControls,
  DEFAULT_OPERATOR_CONTROLS,
  jetstream,
  type OperatorControls__Output,
} from '@hopline/contracts';
import type { HoplineMetrics, Logger } from '@hopline/telemetry';

export interface OperatorControlsWatch {
  /** The controls in force now. */
  current(): OperatorControls__Output;
  stop(): void;
}

/**
 * Follows the operators' controls in their JetStream key-value bucket (`pnpm controls` sets
 * them): each change applies to the questions started after it, without a restart, and shows
 * in the control gauges. No value means the defaults; a value that does not decode or holds an
 * impossible hop cap is logged and ignored, keeping the controls in force.
 */
export async function watchOperatorControls(deps: {
  bus: Bus;
  logger: Pick<Logger, 'info' | 'warn'>;
  metrics: Pick<HoplineMetrics, 'controlMultiHop' | 'controlHopCap'>;
}): Promise<OperatorControlsWatch> {
  const { logger, metrics } = deps;
  let current = DEFAULT_OPERATOR_CONTROLS;
  const apply = (controls: OperatorControls__Output) => {
    current = controls;
    metrics.controlMultiHop.set(controls.multiHop ? 1 : 0);
    metrics.controlHopCap.set(controls.hopCap);
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
