import { z } from 'zod';
import type { Resource } from './kustomize.js';

const labels = z.record(z.string(), z.string());

const probeSchema = z
  .object({
    grpc: z.object({ port: z.number().int(), service: z.string().optional() }).optional(),
    httpGet: z
      .object({ path: z.string(), port: z.union([z.number().int(), z.string()]) })
      .passthrough()
      .optional(),
    tcpSocket: z.unknown().optional(),
    exec: z.unknown().optional(),
  })
  .passthrough();

export type Probe = z.infer<typeof probeSchema>;

const keyRef = z.object({ name: z.string(), key: z.string(), optional: z.boolean().default(false) });

const envVarSchema = z
  .object({
    name: z.string(),
    value: z.string().optional(),
    valueFrom: z
      .object({
        configMapKeyRef: keyRef.optional(),
        secretKeyRef: keyRef.optional(),
        fieldRef: z.object({ fieldPath: z.string() }).optional(),
        resourceFieldRef: z.unknown().optional(),
      })
      .optional(),
  })
  .strict();

export type EnvVar = z.infer<typeof envVarSchema>;

const containerSchema = z
  .object({
    name: z.string(),
    image: z.string(),
    ports: z
      .array(z.object({ name: z.string().optional(), containerPort: z.number().int() }).passthrough())
      .default([]),
    env: z.array(envVarSchema).default([]),
    envFrom: z
      .array(
        z.object({
          configMapRef: z.object({ name: z.string() }).optional(),
          secretRef: z.object({ name: z.string() }).optional(),
          prefix: z.string().optional(),
        }),
      )
      .default([]),
    resources: z
      .object({
        requests: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
        limits: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
      })
      .optional(),
    readinessProbe: probeSchema.optional(),
    livenessProbe: probeSchema.optional(),
    startupProbe: probeSchema.optional(),
    securityContext: z
      .object({ allowPrivilegeEscalation: z.boolean().optional(), runAsNonRoot: z.boolean().optional() })
      .passthrough()
      .optional(),
  })
  .passthrough();

export type Container = z.infer<typeof containerSchema>;

export const deploymentSchema = z
  .object({
    kind: z.literal('Deployment'),
    metadata: z.object({ name: z.string() }).passthrough(),
    spec: z
      .object({
        replicas: z.number().int().optional(),
        selector: z.object({ matchLabels: labels }),
        template: z.object({
          metadata: z.object({ labels }).passthrough(),
          spec: z
            .object({
              containers: z.array(containerSchema).min(1),
              securityContext: z.object({ runAsNonRoot: z.boolean().optional() }).passthrough().optional(),
            })
            .passthrough(),
        }),
      })
      .passthrough(),
  })
  .passthrough();

export type Deployment = z.infer<typeof deploymentSchema>;

export const serviceSchema = z
  .object({
    kind: z.literal('Service'),
    metadata: z.object({ name: z.string() }).passthrough(),
    spec: z
      .object({
        selector: labels,
        ports: z
          .array(
            z
              .object({
                name: z.string().optional(),
                port: z.number().int(),
                targetPort: z.union([z.number().int(), z.string()]).optional(),
              })
              .passthrough(),
          )
          .min(1),
      })
      .passthrough(),
  })
  .passthrough();

export type Service = z.infer<typeof serviceSchema>;

export const hpaSchema = z
  .object({
    apiVersion: z.literal('autoscaling/v2'),
    kind: z.literal('HorizontalPodAutoscaler'),
    metadata: z.object({ name: z.string() }).passthrough(),
    spec: z
      .object({
        scaleTargetRef: z.object({ kind: z.string(), name: z.string() }).passthrough(),
        minReplicas: z.number().int(),
        maxReplicas: z.number().int(),
        metrics: z
          .array(
            z
              .object({
                type: z.string(),
                resource: z
                  .object({ name: z.string(), target: z.object({ type: z.string() }).passthrough() })
                  .optional(),
              })
              .passthrough(),
          )
          .min(1),
      })
      .passthrough(),
  })
  .passthrough();

export const pdbSchema = z
  .object({
    apiVersion: z.literal('policy/v1'),
    kind: z.literal('PodDisruptionBudget'),
    metadata: z.object({ name: z.string() }).passthrough(),
    spec: z
      .object({
        selector: z.object({ matchLabels: labels }),
        minAvailable: z.union([z.number().int(), z.string()]).optional(),
        maxUnavailable: z.union([z.number().int(), z.string()]).optional(),
      })
      .passthrough(),
  })
  .passthrough();

export const dataObjectSchema = z
  .object({
    kind: z.enum(['ConfigMap', 'Secret']),
    metadata: z.object({ name: z.string() }).passthrough(),
    data: z.record(z.string(), z.string()).default({}),
    stringData: z.record(z.string(), z.string()).default({}),
  })
  .passthrough();

export function ofKind<T>(resources: readonly Resource[], kind: string, schema: z.ZodType<T>): T[] {
  return resources
    .filter((resource) => resource.kind === kind)
    .map((resource) => {
      const result = schema.safeParse(resource);
      if (!result.success) {
        throw new Error(
          `${kind} ${resource.metadata.name}: ${result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
        );
      }
      return result.data;
    });
}

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
  const objects = ofKind(resources, 'ConfigMap', dataObjectSchema).concat(
    ofKind(resources, 'Secret', dataObjectSchema),
  );
  const lookup = (kind: 'ConfigMap' | 'Secret', name: string) => {
    const object = objects.find((candidate) => candidate.kind === kind && candidate.metadata.name === name);
    return object ? { ...object.data, ...object.stringData } : undefined;
  };
  const env: Record<string, string> = {};
  const unresolved: string[] = [];
  for (const source of container.envFrom) {
    const [kind, ref] = source.configMapRef
      ? (['ConfigMap', source.configMapRef] as const)
      : (['Secret', source.secretRef] as const);
    const data = ref ? lookup(kind, ref.name) : undefined;
    if (!data) unresolved.push(`envFrom ${kind} ${ref?.name ?? '?'} does not exist`);
    for (const [key, value] of Object.entries(data ?? {})) env[`${source.prefix ?? ''}${key}`] = value;
  }
  for (const variable of container.env) {
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
      const value = lookup(kind, ref.name)?.[ref.key];
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
  return typeof port === 'number' ? port : container.ports.find((candidate) => candidate.name === port)?.containerPort;
}
