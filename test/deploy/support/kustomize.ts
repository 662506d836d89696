import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { z } from 'zod';

/**
 * Renders a kustomization the way `kustomize build` does for the features Hopline's manifests
 * use — resources (files and folders), ConfigMap and Secret generators (with merge), namespace,
 * labels, images, replicas and JSON 6902 patches — so that CI checks what a cluster would get
 * without a kustomize binary. Generated names keep no hash suffix: references stay readable
 * and match. A kustomization field it does not model fails the render rather than being
 * silently ignored.
 */
export const resourceSchema = z
  .object({
    apiVersion: z.string(),
    kind: z.string(),
    metadata: z
      .object({
        name: z.string(),
        namespace: z.string().optional(),
        labels: z.record(z.string(), z.string()).optional(),
      })
      .passthrough(),
  })
  .passthrough();

export type Resource = z.infer<typeof resourceSchema>;

const generatorSchema = z
  .object({
    name: z.string(),
    behavior: z.enum(['create', 'merge', 'replace']).default('create'),
    literals: z.array(z.string()).default([]),
    files: z.array(z.string()).default([]),
    envs: z.array(z.string()).default([]),
    type: z.string().optional(),
    options: z.unknown().optional(),
  })
  .strict();

const patchSchema = z
  .object({
    target: z.object({ kind: z.string(), name: z.string() }).strict(),
    patch: z.string(),
  })
  .strict();

const jsonPatchOperationSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('replace'), path: z.string(), value: z.unknown() }),
  z.object({ op: z.literal('add'), path: z.string(), value: z.unknown() }),
  z.object({ op: z.literal('remove'), path: z.string() }),
]);

const kustomizationSchema = z
  .object({
    apiVersion: z.literal('kustomize.config.k8s.io/v1beta1'),
    kind: z.literal('Kustomization'),
    namespace: z.string().optional(),
    resources: z.array(z.string()).default([]),
    labels: z
      .array(
        z
          .object({
            pairs: z.record(z.string(), z.string()),
            includeSelectors: z.boolean().default(false),
            includeTemplates: z.boolean().default(false),
          })
          .strict(),
      )
      .default([]),
    configMapGenerator: z.array(generatorSchema).default([]),
    secretGenerator: z.array(generatorSchema).default([]),
    images: z
      .array(
        z
          .object({
            name: z.string(),
            newName: z.string().optional(),
            newTag: z.string().optional(),
            digest: z.string().optional(),
          })
          .strict(),
      )
      .default([]),
    replicas: z.array(z.object({ name: z.string(), count: z.number().int().nonnegative() }).strict()).default([]),
    patches: z.array(patchSchema).default([]),
  })
  .strict();

export type Kustomization = z.infer<typeof kustomizationSchema>;

export function readKustomization(dir: string): Kustomization {
  const raw: unknown = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'));
  const result = kustomizationSchema.safeParse(raw);
  if (!result.success) {
    throw new Error(
      `${dir}/kustomization.yaml: ${result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  }
  return result.data;
}

/** Every document of a YAML file, each validated as a Kubernetes resource. */
export function readResources(path: string): Resource[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).map((document, index) => {
    if (document.errors.length > 0) throw new Error(`${path} document ${index + 1}: ${document.errors[0]?.message}`);
    const result = resourceSchema.safeParse(document.toJS());
    if (!result.success)
      throw new Error(`${path} document ${index + 1}: not a Kubernetes resource (${result.error.issues[0]?.message})`);
    return result.data;
  });
}

function keyValueLines(text: string, source: string): [string, string][] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const at = line.indexOf('=');
      if (at <= 0) throw new Error(`${source}: expected KEY=VALUE, got "${line}"`);
      return [line.slice(0, at), line.slice(at + 1)];
    });
}

function generatedData(dir: string, generator: z.infer<typeof generatorSchema>): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, value] of keyValueLines(generator.literals.join('\n'), `${generator.name} literals`))
    data[key] = value;
  for (const entry of generator.files) {
    const at = entry.indexOf('=');
    const [key, file] = at === -1 ? [basename(entry), entry] : [entry.slice(0, at), entry.slice(at + 1)];
    data[key] = readFileSync(join(dir, file), 'utf8');
  }
  for (const file of generator.envs) {
    for (const [key, value] of keyValueLines(readFileSync(join(dir, file), 'utf8'), file)) data[key] = value;
  }
  return data;
}

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The pod template of a workload, as the object itself (transformers edit it in place). */
function podTemplate(resource: Resource): JsonObject | undefined {
  const spec = resource.spec;
  return isObject(spec) && isObject(spec.template) ? spec.template : undefined;
}

function applyImages(resource: Resource, images: Kustomization['images']): void {
  const podSpec = podTemplate(resource)?.spec;
  if (!isObject(podSpec)) return;
  const containers = [podSpec.containers, podSpec.initContainers].flatMap((list) => (Array.isArray(list) ? list : []));
  for (const container of containers) {
    if (!isObject(container) || typeof container.image !== 'string') continue;
    const [name = '', tag] = container.image.split(/:(?=[^/]*$)/);
    const rule = images.find((image) => image.name === name);
    if (!rule) continue;
    const suffix = rule.digest
      ? `@${rule.digest}`
      : rule.newTag !== undefined || tag !== undefined
        ? `:${rule.newTag ?? tag ?? ''}`
        : '';
    container.image = `${rule.newName ?? name}${suffix}`;
  }
}

function applyJsonPatch(target: unknown, operations: z.infer<typeof jsonPatchOperationSchema>[], source: string): void {
  for (const operation of operations) {
    const segments = operation.path
      .split('/')
      .slice(1)
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = segments.pop();
    let node: unknown = target;
    for (const segment of segments) {
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[segment] : undefined;
    }
    if (node === null || typeof node !== 'object' || last === undefined)
      throw new Error(`${source}: path ${operation.path} does not exist`);
    const parent = node as Record<string, unknown>;
    if (operation.op !== 'add' && !(last in parent))
      throw new Error(`${source}: path ${operation.path} does not exist`);
    if (operation.op === 'remove') delete parent[last];
    else parent[last] = operation.value;
  }
}

/** The resources a kustomization folder renders to. */
export function renderKustomization(dir: string): Resource[] {
  const kustomization = readKustomization(dir);
  const resources: Resource[] = [];
  for (const entry of kustomization.resources) {
    const path = join(dir, entry);
    if (!existsSync(path)) throw new Error(`${dir}/kustomization.yaml: resource ${entry} does not exist`);
    resources.push(...(statSync(path).isDirectory() ? renderKustomization(path) : readResources(path)));
  }

  const generators = [
    ...kustomization.configMapGenerator.map((generator) => ({ kind: 'ConfigMap', generator })),
    ...kustomization.secretGenerator.map((generator) => ({ kind: 'Secret', generator })),
  ];
  for (const { kind, generator } of generators) {
    const data = generatedData(dir, generator);
    const existing = resources.find((resource) => resource.kind === kind && resource.metadata.name === generator.name);
    if (generator.behavior === 'create') {
      if (existing) throw new Error(`${dir}: ${kind} ${generator.name} already exists; use behavior merge or replace`);
      resources.push({ apiVersion: 'v1', kind, metadata: { name: generator.name }, data });
    } else {
      if (!existing)
        throw new Error(
          `${dir}: ${kind} ${generator.name} has behavior ${generator.behavior} but no base to ${generator.behavior}`,
        );
      const before = z.record(z.string(), z.string()).parse(existing.data ?? {});
      existing.data = generator.behavior === 'merge' ? { ...before, ...data } : data;
    }
  }

  for (const resource of resources) {
    if (kustomization.namespace && resource.kind !== 'Namespace') resource.metadata.namespace = kustomization.namespace;
    for (const label of kustomization.labels) {
      resource.metadata.labels = { ...resource.metadata.labels, ...label.pairs };
      if (label.includeSelectors)
        throw new Error(`${dir}: labels with includeSelectors are not modelled by this renderer`);
      const template = label.includeTemplates ? podTemplate(resource) : undefined;
      if (template) {
        const metadata = isObject(template.metadata) ? template.metadata : (template.metadata = {});
        metadata.labels = { ...(isObject(metadata.labels) ? metadata.labels : {}), ...label.pairs };
      }
    }
    applyImages(resource, kustomization.images);
  }

  for (const { name, count } of kustomization.replicas) {
    const target = resources.find((resource) => resource.kind === 'Deployment' && resource.metadata.name === name);
    if (!target) throw new Error(`${dir}: replicas for ${name}, which no Deployment is`);
    if (!isObject(target.spec)) throw new Error(`${dir}: Deployment ${name} has no spec`);
    target.spec.replicas = count;
  }

  for (const { target, patch } of kustomization.patches) {
    const resource = resources.find(
      (candidate) => candidate.kind === target.kind && candidate.metadata.name === target.name,
    );
    if (!resource) throw new Error(`${dir}: patch targets ${target.kind} ${target.name}, which does not exist`);
    const operations = z.array(jsonPatchOperationSchema).safeParse(parse(patch));
    if (!operations.success)
      throw new Error(`${dir}: only JSON 6902 patches are modelled (${operations.error.issues[0]?.message})`);
    applyJsonPatch(resource, operations.data, `${dir}: patch of ${target.kind} ${target.name}`);
  }
  return resources;
}
