// `pnpm bench`: runs every benchmark in turn, each in its own process so that one's heap and
// JIT state cannot colour another's figures. Each writes its results under bench/results/.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const benches = readdirSync(benchDir)
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .map((file) => file.replace(/\.ts$/, ''))
  .filter((name) => only.length === 0 || only.includes(name))
  .sort();

let failed = 0;
for (const name of benches) {
  console.log(`\n=== bench/${name}.ts`);
  const result = spawnSync(
    process.execPath,
    ['--conditions=@hopline/source', '--import', 'tsx', `${benchDir}${name}.ts`],
    { stdio: 'inherit' },
  );
  if (result.status !== 0) failed += 1;
}
process.exitCode = failed === 0 ? 0 : 1;
