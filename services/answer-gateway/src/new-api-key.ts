// `pnpm api-key --tenant t --user u --kb kb... [--ingest] --keys-file path`: makes a new API key,
// adds its hash to a keys file (creating the file), and prints the key once on standard output.
// The key itself is stored nowhere: whoever runs this hands it to the user it was made for.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { addApiKey } from './api-keys.js';

const USAGE = `usage: pnpm api-key --tenant id --user id --kb id [--kb id]... [--ingest] --keys-file path

  Prints a new key on standard output and adds its SHA-256 hash to the keys file that the
  gateway reads (API_KEYS_FILE, or the API_KEYS Secret the Kubernetes overlay builds from it).`;

try {
  const { values } = parseArgs({
    options: {
      tenant: { type: 'string' },
      user: { type: 'string' },
      kb: { type: 'string', multiple: true },
      ingest: { type: 'boolean', default: false },
      'keys-file': { type: 'string' },
    },
  });
  // pnpm runs scripts in the repository root; a relative path means the folder pnpm was run in.
  const file = values['keys-file'] && resolve(process.env.INIT_CWD ?? '.', values['keys-file']);
  if (!values.tenant || !values.user || !values.kb || !file)
    throw new Error('--tenant, --user, --kb and --keys-file are required');
  const key = addApiKey(file, {
    tenantId: values.tenant,
    userId: values.user,
    kbIds: values.kb,
    canIngest: values.ingest,
  });
  console.error(`added a key for tenant "${values.tenant}" to ${file}; it is shown once, here:`);
  console.log(key);
} catch (error) {
  console.error(`error: ${(error as Error).message}\n${USAGE}`);
  process.exitCode = 2;
}
