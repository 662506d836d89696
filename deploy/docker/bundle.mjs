// Copies one service and the workspace packages it depends on into a self-contained tree that
// the runtime image runs as is:
//
//   node deploy/docker/bundle.mjs <service> <out-dir>
//
// Run after `pnpm build` and after a production-only `pnpm install` of that service, from the
// workspace root. It does what `pnpm deploy` would, except that it keeps each package's `dist/`
// (which .gitignore hides from `pnpm deploy`'s pack step) and the workspace layout, so that
// `@hopline/contracts` still finds `proto/` two folders above its `dist/`.
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const [service, outDir] = process.argv.slice(2);
if (!service || !outDir) {
  console.error('usage: node deploy/docker/bundle.mjs <service> <out-dir>');
  process.exit(2);
}

const root = process.cwd();
const WORKSPACE_FOLDERS = ['packages', 'services'];
// Sources, tests, build scripts and build configuration stay behind; anything else at a
// package's top level (dist/, prompt or data folders the code reads at run time) ships.
const LEFT_BEHIND = new Set(['src', 'test', 'scripts', 'node_modules', 'tsconfig.json', 'tsconfig.build.json']);

function readManifest(dir) {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
}

const packageDirs = new Map();
for (const folder of WORKSPACE_FOLDERS) {
  for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
    const dir = join(root, folder, entry.name);
    if (entry.isDirectory() && existsSync(join(dir, 'package.json'))) packageDirs.set(readManifest(dir).name, dir);
  }
}

/** The service's package and every workspace package reachable through `dependencies`. */
function productionClosure(name) {
  const seen = new Set();
  const visit = (packageName) => {
    if (seen.has(packageName)) return;
    const dir = packageDirs.get(packageName);
    if (!dir) throw new Error(`workspace package ${packageName} not found under ${WORKSPACE_FOLDERS.join(', ')}`);
    seen.add(packageName);
    for (const [dependency, range] of Object.entries(readManifest(dir).dependencies ?? {})) {
      if (String(range).startsWith('workspace:')) visit(dependency);
    }
  };
  visit(name);
  return [...seen].map((packageName) => packageDirs.get(packageName));
}

// Symlinks stay links: pnpm's node_modules are relative links into node_modules/.pnpm.
const copy = (from, to) => cpSync(from, to, { recursive: true, verbatimSymlinks: true });

const dirs = productionClosure(`@hopline/${service}`);
for (const dir of dirs) {
  const target = join(outDir, relative(root, dir));
  if (!existsSync(join(dir, 'dist'))) throw new Error(`${relative(root, dir)} has no dist/: run pnpm build first`);
  mkdirSync(target, { recursive: true });
  for (const entry of readdirSync(dir)) {
    if (LEFT_BEHIND.has(entry) || entry.endsWith('.tsbuildinfo')) continue;
    copy(join(dir, entry), join(target, entry));
  }
  if (existsSync(join(dir, 'node_modules'))) copy(join(dir, 'node_modules'), join(target, 'node_modules'));
}
copy(join(root, 'node_modules'), join(outDir, 'node_modules'));
copy(join(root, 'proto'), join(outDir, 'proto'));
copy(join(root, 'package.json'), join(outDir, 'package.json'));
copy(join(root, 'deploy/docker/healthcheck.mjs'), join(outDir, 'healthcheck.mjs'));

console.log(`bundled ${service}: ${dirs.map((dir) => relative(root, dir)).join(', ')}`);
