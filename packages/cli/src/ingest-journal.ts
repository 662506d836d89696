import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * What an interrupted `pnpm ingest` of some folders or files already had accepted: one line per
 * file ("<version>\t<name>"), appended as soon as the gateway accepted the file's documents. A
 * run of the same paths, into the same kb, through the same gateway, with the same key skips the
 * files it lists at the same version (modification time), and sends the rest.
 */
export class IngestJournal {
  private readonly accepted = new Map<string, number>();

  private constructor(readonly path: string) {
    if (!existsSync(path)) return;
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const tab = line.indexOf('\t');
      if (tab > 0) this.accepted.set(line.slice(tab + 1), Number(line.slice(0, tab)));
    }
  }

  /** The journal of these paths, kb, gateway and key, under `dataDir`; `restart` forgets it. */
  static open(
    dataDir: string,
    run: { paths: readonly string[]; kb: string; url: string; apiKey: string },
    restart: boolean,
  ) {
    // One path is hashed as the one folder was before several could be given: an interrupted
    // run's journal is still found after an upgrade.
    const paths = run.paths.length === 1 ? run.paths[0] : run.paths;
    // The key is hashed into the name, never written: the journal is no place for a secret.
    const id = createHash('sha256')
      .update(JSON.stringify([paths, run.kb, run.url, run.apiKey]))
      .digest('hex')
      .slice(0, 16);
    const path = join(dataDir, 'ingest', `${id}.journal`);
    if (restart) rmSync(path, { force: true });
    return new IngestJournal(path);
  }

  has(name: string, version: number): boolean {
    return this.accepted.get(name) === version;
  }

  record(files: ReadonlyArray<{ name: string; version: number }>): void {
    if (files.length === 0) return;
    mkdirSync(dirname(this.path), { recursive: true });
    appendFileSync(this.path, files.map(({ name, version }) => `${version}\t${name}\n`).join(''));
    for (const { name, version } of files) this.accepted.set(name, version);
  }
}
