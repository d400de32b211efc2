import {
  applyPatch,
  ConflictError,
  defaultPolicy,
  isMagnetarError,
  selectorFromSpec,
  validateCapiSpec,
  type ApiObject,
  type PatchType,
  type SelectorSpec,
} from '../../domain/index.ts';
import type { KubeRoutesDeps } from './context.ts';
import { getObject } from './object-ops.ts';
import type { KubeResource } from './resources.ts';
import { admitMagnumUpdate, magnumClusterOf, resizeThroughMagnum, sizeProblems } from './magnum-owned.ts';
import { badRequest, conflict, invalid, notFound } from './status.ts';

/**
 * The `scale` subresource (autoscaling/v1 `Scale`) of MachineDeployments, MachineSets and
 * KubeadmControlPlanes: what `kubectl scale` reads and writes. Only `spec.replicas` changes.
 */

type Scalable = ApiObject<
  { replicas?: number; selector?: SelectorSpec },
  { replicas?: number; selector?: string }
>;

/** An autoscaling/v1 Scale. */
export interface Scale {
  apiVersion: 'autoscaling/v1';
  kind: 'Scale';
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
  };
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

function selectorText(obj: Scalable): string | undefined {
  if (obj.status.selector) return obj.status.selector;
  const reqs = selectorFromSpec(obj.spec.selector);
  if (reqs.length === 0) return undefined;
  return reqs
    .map((q) => {
      switch (q.operator) {
        case 'In':
          return q.values.length === 1 ? `${q.key}=${q.values[0]}` : `${q.key} in (${q.values.join(',')})`;
        case 'NotIn':
          return `${q.key} notin (${q.values.join(',')})`;
        case 'Exists':
          return q.key;
        case 'DoesNotExist':
          return `!${q.key}`;
      }
    })
    .join(',');
}

/** The Scale view of an object. */
export function scaleOf(obj: Scalable): Scale {
  const selector = selectorText(obj);
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: {
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    },
    spec: { replicas: obj.spec.replicas ?? 1 },
    status: { replicas: obj.status.replicas ?? 0, ...(selector ? { selector } : {}) },
  };
}

/** GET …/scale. */
export async function getScale(
  deps: KubeRoutesDeps,
  r: KubeResource,
  namespace: string,
  name: string,
): Promise<Scale> {
  return scaleOf((await getObject(deps, r, namespace, name)) as Scalable);
}

function replicasOf(
  r: KubeResource,
  name: string,
  body: unknown,
): { replicas: number; resourceVersion?: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('a Scale must be an object');
  const b = body as { spec?: { replicas?: unknown }; metadata?: { resourceVersion?: unknown } };
  const replicas = b.spec?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)
    throw invalid(r, name, ['spec.replicas: must be a non-negative integer']);
  const rv = b.metadata?.resourceVersion;
  return { replicas, ...(typeof rv === 'string' && rv !== '' ? { resourceVersion: rv } : {}) };
}

/**
 * PUT (`body` is a Scale) or PATCH (`patch` of the given type applied to the current Scale) of
 * …/scale. A resourceVersion in the Scale must be current (409 otherwise); without one, a
 * concurrent write is retried.
 */
export async function writeScale(
  deps: KubeRoutesDeps,
  r: KubeResource,
  namespace: string,
  name: string,
  change: { put: unknown } | { patch: unknown; type: PatchType },
  dryRun: boolean,
): Promise<Scale> {
  for (let attempt = 0; ; attempt++) {
    const stored = (await getObject(deps, r, namespace, name)) as Scalable;
    const current = scaleOf(stored);
    const wanted = 'put' in change ? change.put : applyPatch(change.type, current, change.patch);
    const { replicas, resourceVersion } = replicasOf(r, name, wanted);
    if (resourceVersion !== undefined && resourceVersion !== stored.metadata.resourceVersion)
      throw conflict(r, name);
    const spec = { ...stored.spec, replicas };
    const problems = validateCapiSpec(r.type, spec, stored.spec);
    if (problems.length === 0) problems.push(...sizeProblems(deps.policy ?? defaultPolicy, r, name, spec));
    if (problems.length > 0) throw invalid(r, name, problems);
    if (magnumClusterOf(stored) && replicas !== stored.spec.replicas) {
      const next = { ...stored, spec };
      admitMagnumUpdate(r, stored, next);
      return scaleOf(
        (await resizeThroughMagnum(deps, r, stored, next, {
          dryRun,
          pinned: resourceVersion !== undefined,
        })) as Scalable,
      );
    }
    if (dryRun) return scaleOf({ ...stored, spec });
    try {
      return scaleOf(await deps.store.update<Scalable>({ ...stored, spec }));
    } catch (err) {
      if (err instanceof ConflictError && resourceVersion === undefined && attempt < 4) continue;
      if (err instanceof ConflictError) throw conflict(r, name);
      if (isMagnetarError(err) && err.status === 404) throw notFound(r, name);
      throw err;
    }
  }
}
