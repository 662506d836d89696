// Loaded with `node --import` before start.ts. The embedded mode is one process, so its spans
// share one service.name; each span still names its component in `hopline.component`.
import { bootTelemetry } from '@hopline/telemetry';

bootTelemetry('hopline-embedded');
