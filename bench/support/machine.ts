import { cpus } from 'node:os';

/** The machine a bench ran on, as every result names it: cores × model, and the Node version. */
export function machineDescription(): string {
  return `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`;
}
