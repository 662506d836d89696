import { execFileSync, spawnSync } from 'node:child_process';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';

/**
 * The kinds Hopline's manifests use, each with its Kubernetes schema (kubernetes-models): a
 * rendered object of another kind fails the render, so a new kind gets its schema here.
 */
const MODELS = {
  Namespace,
  ConfigMap,
  Secret,
  Service,
  Deployment,
  HorizontalPodAutoscaler,
  PodDisruptionBudget,
  NetworkPolicy,
};

export type Kind = keyof typeof MODELS;
export type ResourceOf<K extends Kind> = InstanceType<(typeof MODELS)[K]>;
export type Resource = ResourceOf<Kind>;

export const hasKubectl = (): boolean =>
  spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

/** One rendered object, validated against the schema of its kind and API version. */
export function validResource(raw: unknown): Resource {
  const { apiVersion, kind, metadata } = (raw ?? {}) as {
    apiVersion?: unknown;
    kind?: unknown;
    metadata?: { name?: unknown };
  };
  const where = `${String(kind)} ${String(metadata?.name)}`;
  const model = MODELS[kind as Kind] as (typeof MODELS)[Kind] | undefined;
  if (!model) throw new Error(`${where}: no schema for kind ${String(kind)} (add it to MODELS)`);
  if (apiVersion !== model.apiVersion)
    throw new Error(`${where}: apiVersion ${String(apiVersion)}, expected ${model.apiVersion}`);
  const resource = new model(raw as never);
  try {
    resource.validate();
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`);
  }
  return resource;
}

/** What `kubectl kustomize` renders from a kustomization folder, each object validated. */
export function renderKustomization(dir: string): Resource[] {
  const rendered = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseAllDocuments(rendered)
    .map((document) => document.toJS() as unknown)
    .filter((object) => object !== null)
    .map((object) => validResource(unfoldSecretData(object)));
}

/**
 * kubectl folds a long base64 value of a Secret over several lines; Kubernetes' decoder skips
 * the line breaks, the schema's "byte" format does not.
 */
function unfoldSecretData(object: unknown): unknown {
  const resource = object as { kind?: unknown; data?: Record<string, string> };
  if (resource.kind !== 'Secret' || !resource.data) return object;
  const data = Object.entries(resource.data).map(([key, value]) => [key, value.replace(/\s+/g, '')]);
  return { ...resource, data: Object.fromEntries(data) as Record<string, string> };
}

export function ofKind<K extends Kind>(resources: readonly Resource[], kind: K): ResourceOf<K>[] {
  return resources.filter((resource): resource is ResourceOf<K> => resource.kind === kind);
}
