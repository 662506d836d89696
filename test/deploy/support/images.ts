export interface ImageReference {
  repository: string;
  tag: string | undefined;
  digest: string | undefined;
}

/** Splits `[registry[:port]/]repository[:tag][@sha256:digest]`. */
export function parseImageReference(reference: string): ImageReference {
  const [name = '', digest] = reference.split('@');
  const lastSlash = name.lastIndexOf('/');
  const colon = name.indexOf(':', lastSlash + 1);
  return colon === -1
    ? { repository: name, tag: undefined, digest }
    : { repository: name.slice(0, colon), tag: name.slice(colon + 1), digest };
}

const EXACT_VERSION = /\d+\.\d+\.\d+|\d{4}-\d{2}-\d{2}/;

/**
 * Why an image reference is not pinned, or undefined when it is: it needs a digest, or a tag
 * that names one release (x.y.z, or a dated release like MinIO's) — not `latest`, not a
 * floating `22-slim` or `7.4-alpine`, not nothing.
 */
export function unpinnedReason(reference: string): string | undefined {
  if (reference.includes('$')) return `${reference} still has an unsubstituted variable`;
  const image = parseImageReference(reference);
  if (image.digest !== undefined) {
    return /^sha256:[0-9a-f]{64}$/.test(image.digest) ? undefined : `${reference} has a malformed digest`;
  }
  if (image.tag === undefined || image.tag === '') return `${reference} has no tag (Docker reads it as latest)`;
  if (image.tag === 'latest') return `${reference} is tagged latest`;
  if (!EXACT_VERSION.test(image.tag)) return `${reference} has a floating tag, not an exact version`;
  return undefined;
}

export interface DockerfileStage {
  /** The image or earlier stage it starts from, with ARG defaults and build args substituted. */
  from: string;
  name: string | undefined;
  /** Instructions of the stage, continuation lines joined. */
  instructions: { keyword: string; argument: string }[];
}

/** Parses the FROM structure of a Dockerfile: global ARG defaults and each stage's instructions. */
export function parseDockerfile(text: string, buildArgs: Readonly<Record<string, string>> = {}): DockerfileStage[] {
  const logical = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const globals = new Map<string, string>();
  const stages: DockerfileStage[] = [];
  const substitute = (value: string, scope: ReadonlyMap<string, string>) =>
    value.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
      (whole, braced?: string, bare?: string) => {
        const name = (braced ?? bare) as string;
        return buildArgs[name] ?? scope.get(name) ?? whole;
      },
    );
  for (const line of logical) {
    const match = /^(\S+)\s*(.*)$/.exec(line);
    const keyword = (match?.[1] ?? '').toUpperCase();
    const argument = match?.[2] ?? '';
    if (keyword === 'FROM') {
      const parts = argument.split(/\s+/).filter((part) => !part.startsWith('--'));
      const as = parts.findIndex((part) => part.toUpperCase() === 'AS');
      stages.push({
        from: substitute(parts[0] ?? '', globals),
        name: as === -1 ? undefined : parts[as + 1],
        instructions: [],
      });
    } else if (stages.length === 0 && keyword === 'ARG') {
      const [name = '', value] = argument.split(/=(.*)/s);
      if (value !== undefined) globals.set(name, value.replace(/^(['"])(.*)\1$/, '$2'));
    } else if (stages.length > 0) {
      stages.at(-1)?.instructions.push({ keyword, argument });
    }
  }
  return stages;
}

/** The stages' external base images: FROMs that do not name an earlier stage. */
export function baseImages(stages: readonly DockerfileStage[]): string[] {
  const names = new Set<string>();
  const images: string[] = [];
  for (const stage of stages) {
    if (!names.has(stage.from)) images.push(stage.from);
    if (stage.name) names.add(stage.name);
  }
  return images;
}

/**
 * Whether `docker build` leaves a path out of the context, by .dockerignore's rules: patterns
 * are relative to the context root, `*` and `?` stay within one path segment, `**` spans any
 * number, a pattern that matches a folder excludes what is in it, and the last matching
 * pattern wins (`!` re-includes).
 */
export function dockerIgnores(dockerignore: string): (path: string) => boolean {
  const rules = dockerignore
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const include = line.startsWith('!');
      const pattern = (include ? line.slice(1) : line).replace(/^\/+|\/+$/g, '');
      const source = pattern
        .split(/(\*\*\/?|\*|\?)/)
        .map((part) => {
          if (part === '**/') return '(?:.*/)?';
          if (part === '**') return '.*';
          if (part === '*') return '[^/]*';
          if (part === '?') return '[^/]';
          return part.replace(/[.+^${}()|[\]\\]/g, '\\$&');
        })
        .join('');
      return { include, regex: new RegExp(`^${source}$`) };
    });
  return (path: string) => {
    const segments = path.split('/');
    const prefixes = segments.map((_, index) => segments.slice(0, index + 1).join('/'));
    let ignored = false;
    for (const rule of rules) {
      if (prefixes.some((prefix) => rule.regex.test(prefix))) ignored = !rule.include;
    }
    return ignored;
  };
}
