import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Whether a tool the gateway's client tests need is installed. In CI a missing one fails the
 * suite (CI installs them); elsewhere the suite skips after a loud notice.
 */
export function requireTool(name: string, available: boolean, install: string): boolean {
  if (available) return true;
  if (process.env.CI) throw new Error(`${name} is missing, and CI must run this suite: ${install}`);
  console.warn(`\n!!!!!!!!\n!!  SKIPPING ${name} tests: ${name} is not installed (${install}). In CI they fail instead.\n!!!!!!!!\n`);
  return false;
}

export const CHROMIUM = '/usr/bin/chromium';

export const hasChromium = () => existsSync(CHROMIUM);

export const PYTHON = '/usr/bin/python3';

export const hasPythonGrpc = () => existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import grpc, grpc_tools'], { stdio: 'ignore' }).status === 0;
