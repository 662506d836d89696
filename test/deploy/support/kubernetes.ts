import type { IContainer, IProbe } from 'kubernetes-models/v1';
import { ofKind, type Resource } from './kustomize.js';

export type Container = IContainer;
export type Probe = IProbe;

/** Whether every label of `selector` is on `podLabels`. */
export const selects = (
  selector: Readonly<Record<string, string>>,
  podLabels: Readonly<Record<string, string>>,
): boolean => Object.entries(selector).every(([key, value]) => podLabels[key] === value);

export interface ResolvedEnv {
  env: Record<string, string>;
  /** References a pod could not start with: a missing ConfigMap, Secret or key that is not optional. */
  unresolved: string[];
}

/**
 * The environment a container gets in the rendered manifests: literal values, ConfigMap and
 * Secret keys (an optional reference to a missing key sets nothing), downward-API fields as a
 * placeholder, and envFrom expanded.
 */
export function resolveContainerEnv(container: Container, resources: readonly Resource[]): ResolvedEnv {
  const objects = [...ofKind(resources, 'ConfigMap'), ...ofKind(resources, 'Secret')];
  const lookup = (kind: 'ConfigMap' | 'Secret', name: string): Record<string, string> | undefined => {
    const object = objects.find((candidate) => candidate.kind === kind && candidate.metadata?.name === name);
    if (object?.kind !== 'Secret') return object?.data;
    // A Secret's data is base64; the kubelet hands the container the decoded value.
    const decoded = Object.entries(object.data ?? {}).map(([key, value]) => [
      key,
      Buffer.from(value, 'base64').toString(),
    ]);
    return { ...Object.fromEntries(decoded), ...object.stringData } as Record<string, string>;
  };
  const env: Record<string, string> = {};
  const unresolved: string[] = [];
  for (const source of container.envFrom ?? []) {
    const [kind, ref] = source.configMapRef
      ? (['ConfigMap', source.configMapRef] as const)
      : (['Secret', source.secretRef] as const);
    const data = ref ? lookup(kind, ref.name ?? '') : undefined;
    if (!data) unresolved.push(`envFrom ${kind} ${ref?.name ?? '?'} does not exist`);
    for (const [key, value] of Object.entries(data ?? {})) env[`${source.prefix ?? ''}${key}`] = value;
  }
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    if (variable.value !== undefined) {
      env[variable.name] = variable.value;
    } else if (from?.fieldRef || from?.resourceFieldRef) {
      env[variable.name] = `<${from.fieldRef?.fieldPath ?? 'resource'}>`;
    } else if (from?.configMapKeyRef || from?.secretKeyRef) {
      const [kind, ref] = from.configMapKeyRef
        ? (['ConfigMap', from.configMapKeyRef] as const)
        : (['Secret', from.secretKeyRef] as const);
      if (!ref) continue;
      const value = lookup(kind, ref.name ?? '')?.[ref.key];
      if (value !== undefined) env[variable.name] = value;
      else if (!ref.optional) unresolved.push(`${variable.name}: ${kind} ${ref.name} has no key ${ref.key}`);
    } else {
      unresolved.push(`${variable.name} has neither a value nor a valueFrom`);
    }
  }
  return { env, unresolved };
}

/** The number behind a probe's or Service's port: a number, or the name of a container port. */
export function containerPortNumber(container: Container, port: number | string): number | undefined {
  return typeof port === 'number'
    ? port
    : (container.ports ?? []).find((candidate) => candidate.name === port)?.containerPort;
}
