// Loaded with `node --import` before start.ts. The embedded mode is one process, so its
// spans share one service.name; the span names say which component made each.
import { bootTelemetry } from '@hopline/telemetry';

bootTelemetry('hopline-embedded');
