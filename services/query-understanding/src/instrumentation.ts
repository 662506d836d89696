// Loaded with `node --import` before main.ts, so the SDK is in place before any span opens.
import { bootTelemetry } from '@hopline/telemetry';

bootTelemetry('query-understanding');
