import { parse as parseYaml } from 'yaml';
import {
  acceptsTable,
  applyPatch,
  buildTable,
  ConflictError,
  defaultPolicy,
  isMagnetarError,
  matchesFieldSelector,
  patchTypeOf,
  UnprocessableError,
  validateCapiSpec,
  type ApiObject,
  type KubeObject,
  type PatchType,
} from '../../domain/index.ts';
import type { KubeRoutesDeps, KubeQuery } from './context.ts';
import { newObject, nameProblems, parseBody, toWire, updatedObject, type Body } from './objects.ts';
import { printerOf } from './printers.ts';
import type { KubeResource } from './resources.ts';
import { expandMachine, keepExpandedRefs, namesTemplates } from './machine-templates.ts';
import {
  admitMagnumDelete,
  admitMagnumUpdate,
  checkCreate,
  magnumClusterOf,
  resizeThroughMagnum,
  sizeProblems,
} from './magnum-owned.ts';
import { alreadyExists, badRequest, conflict, invalid, notFound, unsupportedMediaType } from './status.ts';

/**
 * The verbs of the kube façade on stored objects: list, get, create, update (PUT), patch
 * (merge, strategic-as-merge, JSON patch, server-side apply) and delete. Every write goes
 * through the store's resourceVersion checks; spec admission is `validateCapiSpec`.
 */

type Stored = ApiObject<unknown, unknown>;

/** A list, as objects or as a Table. */
export async function listObjects(
  deps: KubeRoutesDeps,
  r: KubeResource,
  namespaces: string[] | undefined,
  q: KubeQuery,
  accept: string | undefined,
): Promise<unknown> {
  let items: KubeObject[] = [];
  let resourceVersion: string;
  let cont: string | undefined;
  if (namespaces && namespaces.length === 0) {
    resourceVersion = String(await deps.store.currentRevision());
  } else {
    // A field selector filters after the store: page only when there is none.
    const paged = q.fieldSelector.length === 0;
    const res = await deps.store.list<Stored>(r.type, {
      ...(namespaces ? { namespace: namespaces[0]! } : {}),
      ...(q.labelSelector ? { labelSelector: q.labelSelector } : {}),
      ...(paged && q.limit ? { limit: q.limit } : {}),
      ...(paged && q.continue ? { continue: q.continue } : {}),
    });
    items = res.items.map(toWire).filter((o) => matchesFieldSelector(o, q.fieldSelector));
    resourceVersion = res.resourceVersion;
    cont = res.continue;
  }
  if (acceptsTable(accept)) {
    return buildTable(printerOf(r.type), items, {
      resourceVersion,
      nowMs: deps.clock.now(),
      ...(q.includeObject ? { includeObject: q.includeObject } : {}),
      ...(cont ? { continue: cont } : {}),
    });
  }
  return {
    apiVersion: `${r.group}/${r.version}`,
    kind: `${r.kind}List`,
    metadata: { resourceVersion, ...(cont ? { continue: cont } : {}) },
    items,
  };
}

/** One object, or a Table of one row. */
export function render(
  deps: KubeRoutesDeps,
  r: KubeResource,
  obj: Stored,
  accept: string | undefined,
  q?: KubeQuery,
): unknown {
  const wire = toWire(obj);
  if (!acceptsTable(accept)) return wire;
  return buildTable(printerOf(r.type), [wire], {
    resourceVersion: obj.metadata.resourceVersion,
    nowMs: deps.clock.now(),
    ...(q?.includeObject ? { includeObject: q.includeObject } : {}),
  });
}

/** The stored object or 404. */
export async function getObject(
  deps: KubeRoutesDeps,
  r: KubeResource,
  namespace: string,
  name: string,
): Promise<Stored> {
  const obj = await deps.store.get<Stored>(r.type, namespace, name);
  if (!obj) throw notFound(r, name);
  return obj;
}

function checkSpec(
  deps: KubeRoutesDeps,
  r: KubeResource,
  name: string,
  spec: unknown,
  previous?: unknown,
): void {
  const problems = validateCapiSpec(r.type, spec, previous);
  if (problems.length === 0) problems.push(...sizeProblems(deps.policy ?? defaultPolicy, r, name, spec));
  if (problems.length > 0) throw invalid(r, name, problems);
}

/** Create from a body (201). */
export async function createObject(
  deps: KubeRoutesDeps,
  r: KubeResource,
  namespace: string,
  raw: unknown,
  q: KubeQuery,
): Promise<Stored> {
  const body = parseBody(r, raw, { namespace });
  const name = body.metadata?.name;
  const problems = nameProblems(name, body.metadata?.generateName);
  if (problems.length > 0) throw invalid(r, name ?? '', problems);
  checkCreate(r, name ?? '', body.metadata?.labels);
  checkSpec(deps, r, name ?? '', body.spec ?? {});
  const obj = newObject(r, body, namespace);
  if (namesTemplates(r, obj.spec)) {
    const { ops, name: made } = await expandMachine(deps, r, obj);
    if (q.dryRun) return dryRunObject(ops[0]!.op === 'create' ? ops[0]!.object : obj, deps);
    try {
      const [machine] = await deps.store.commit(ops);
      return machine as Stored;
    } catch (err) {
      if (err instanceof ConflictError && err.code === 'AlreadyExists') throw alreadyExists(r, made);
      throw err;
    }
  }
  if (q.dryRun) return dryRunObject(obj, deps);
  try {
    return await deps.store.create<Stored>(obj);
  } catch (err) {
    if (err instanceof ConflictError && err.code === 'AlreadyExists') throw alreadyExists(r, name ?? '');
    throw err;
  }
}

function dryRunObject(obj: ReturnType<typeof newObject>, deps: KubeRoutesDeps): Stored {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      name: obj.metadata.name ?? `${obj.metadata.generateName ?? ''}xxxxx`,
      namespace: obj.metadata.namespace,
      uid: '',
      resourceVersion: '',
      generation: 1,
      creationTimestamp: new Date(deps.clock.now()).toISOString(),
      labels: obj.metadata.labels ?? {},
      annotations: obj.metadata.annotations ?? {},
      ownerReferences: obj.metadata.ownerReferences ?? [],
      finalizers: obj.metadata.finalizers ?? [],
    },
    spec: obj.spec,
    status: {},
  };
}

/** Write `next` (built from `stored`); a stale resourceVersion is a 409 naming the object. */
async function write(deps: KubeRoutesDeps, r: KubeResource, next: Stored, dryRun: boolean): Promise<Stored> {
  if (dryRun) return next;
  try {
    return await deps.store.update<Stored>(next);
  } catch (err) {
    if (err instanceof ConflictError) throw conflict(r, next.metadata.name);
    if (isMagnetarError(err) && err.status === 404) throw notFound(r, next.metadata.name);
    throw err;
  }
}

/** PUT: replace labels, annotations, owner references, finalizers and spec; resourceVersion required. */
export async function replaceObject(
  deps: KubeRoutesDeps,
  r: KubeResource,
  namespace: string,
  name: string,
  raw: unknown,
  q: KubeQuery,
): Promise<Stored> {
  const body = parseBody(r, raw, { namespace, name });
  const stored = await getObject(deps, r, namespace, name);
  if (!body.metadata?.resourceVersion)
    throw invalid(r, name, ['metadata.resourceVersion: must be specified for an update']);
  if (body.metadata.uid && body.metadata.uid !== stored.metadata.uid)
    throw conflict(
      r,
      name,
      `Precondition failed: UID in precondition: ${body.metadata.uid}, UID in object meta: ${stored.metadata.uid}`,
    );
  const spec = await keepExpandedRefs(deps, r, stored, body.spec ?? {});
  checkSpec(deps, r, name, spec, stored.spec);
  return writeChecked(deps, r, stored, updatedObject(stored, { ...body, spec }), q.dryRun, true);
}

/** Write an update after the Magnum-ownership rules (a replicas change of a Magnum object is a resize). */
async function writeChecked(
  deps: KubeRoutesDeps,
  r: KubeResource,
  stored: Stored,
  next: Stored,
  dryRun: boolean,
  pinned: boolean,
): Promise<Stored> {
  if (magnumClusterOf(stored) && admitMagnumUpdate(r, stored, next).resize)
    return resizeThroughMagnum(deps, r, stored, next, { dryRun, pinned });
  return write(deps, r, next, dryRun);
}

/** Which patch a request sends (`apply` = server-side apply YAML); 415 otherwise. */
export function patchKind(contentType: string | undefined): PatchType | 'apply' {
  const ct = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (ct === 'application/apply-patch+yaml') return 'apply';
  const t = patchTypeOf(ct);
  if (!t) throw unsupportedMediaType(ct);
  return t;
}

/** Parse a patch body (JSON already parsed; YAML for server-side apply). */
export function patchBody(kind: PatchType | 'apply', raw: unknown): unknown {
  if (raw === undefined) throw badRequest('the patch body is empty');
  if (kind !== 'apply') return raw;
  const text = Buffer.isBuffer(raw)
    ? raw.toString('utf8')
    : typeof raw === 'string'
      ? raw
      : JSON.stringify(raw);
  try {
    return parseYaml(text) as unknown;
  } catch (err) {
    throw badRequest(`error decoding YAML: ${(err as Error).message}`);
  }
}

/**
 * PATCH. Merge patches are applied to the served form; a strategic merge patch is applied
 * as a merge patch (these are custom resources, as in Kubernetes); server-side apply merges the
 * applied configuration into the object, creating it when missing. Without a resourceVersion
 * in the patch, a concurrent write is retried on the fresh object, as the API server does.
 */
export async function patchObject(
  deps: KubeRoutesDeps,
  r: KubeResource,
  namespace: string,
  name: string,
  kind: PatchType | 'apply',
  patch: unknown,
  q: KubeQuery,
): Promise<{ object: Stored; created: boolean }> {
  if (kind === 'apply') {
    if (!q.fieldManager) throw badRequest('PATCH requests with apply-patch+yaml require a fieldManager');
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
      throw badRequest('the applied configuration must be an object');
  }
  for (let attempt = 0; ; attempt++) {
    const stored = await deps.store.get<Stored>(r.type, namespace, name);
    if (!stored) {
      if (kind !== 'apply') throw notFound(r, name);
      const body = parseBody(r, patch, { namespace, name });
      return {
        object: await createObject(deps, r, namespace, { ...body, metadata: { ...body.metadata, name } }, q),
        created: true,
      };
    }
    const current = toWire(stored);
    const type: PatchType = kind === 'apply' || kind === 'strategic' ? 'merge' : kind;
    let patched: unknown;
    try {
      patched = applyPatch(type, current, stripStatusOfApply(kind, patch));
    } catch (err) {
      if (isMagnetarError(err) && (err.status === 400 || err.status === 422)) throw err;
      throw badRequest(`the patch could not be applied: ${(err as Error).message}`);
    }
    if (typeof patched !== 'object' || patched === null || Array.isArray(patched))
      throw new UnprocessableError('the patched object is not an object', { code: 'Invalid' });
    const body: Body = parseBody(r, patched, { namespace, name });
    const pinned = body.metadata?.resourceVersion;
    if (pinned !== undefined && pinned !== stored.metadata.resourceVersion) throw conflict(r, name);
    if (body.metadata?.uid !== undefined && body.metadata.uid !== stored.metadata.uid)
      throw conflict(
        r,
        name,
        `Precondition failed: UID in precondition: ${body.metadata.uid}, UID in object meta: ${stored.metadata.uid}`,
      );
    const spec = await keepExpandedRefs(deps, r, stored, body.spec ?? {});
    checkSpec(deps, r, name, spec, stored.spec);
    const next = updatedObject(stored, {
      ...body,
      spec,
      metadata: { ...body.metadata, resourceVersion: stored.metadata.resourceVersion },
    });
    try {
      return {
        object: await writeChecked(deps, r, stored, next, q.dryRun, pinned !== undefined),
        created: false,
      };
    } catch (err) {
      const retry =
        err instanceof ConflictError && err.code === 'Conflict' && pinned === undefined && attempt < 4;
      if (!retry) throw err;
    }
  }
}

function stripStatusOfApply(kind: PatchType | 'apply', patch: unknown): unknown {
  if (kind !== 'apply' || typeof patch !== 'object' || patch === null) return patch;
  const { status: _status, ...rest } = patch as Record<string, unknown>;
  return rest;
}

/** DeleteOptions (body or query). */
export interface DeletePreconditions {
  uid?: string;
  resourceVersion?: string;
}

/** Parse the body of a DELETE (DeleteOptions); empty is fine. */
export function deletePreconditions(raw: unknown): DeletePreconditions {
  if (raw === undefined || raw === null || Buffer.isBuffer(raw)) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('DeleteOptions must be an object');
  const pre = (raw as { preconditions?: unknown }).preconditions;
  if (pre === undefined || pre === null) return {};
  if (typeof pre !== 'object') throw badRequest('preconditions must be an object');
  const p = pre as Record<string, unknown>;
  return {
    ...(typeof p.uid === 'string' ? { uid: p.uid } : {}),
    ...(typeof p.resourceVersion === 'string' ? { resourceVersion: p.resourceVersion } : {}),
  };
}

/**
 * DELETE: sets deletionTimestamp; with finalizers the object stays (answered with the object)
 * until the controllers remove them; without, it is gone (answered with a Success Status).
 */
export async function deleteObject(
  deps: KubeRoutesDeps,
  r: KubeResource,
  namespace: string,
  name: string,
  pre: DeletePreconditions,
  q: KubeQuery,
): Promise<{ object?: Stored; uid: string }> {
  const stored = await getObject(deps, r, namespace, name);
  if (pre.uid !== undefined && pre.uid !== stored.metadata.uid)
    throw conflict(
      r,
      name,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${stored.metadata.uid}`,
    );
  if (pre.resourceVersion !== undefined && pre.resourceVersion !== stored.metadata.resourceVersion)
    throw conflict(
      r,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in meta: ${stored.metadata.resourceVersion}`,
    );
  await admitMagnumDelete(deps, r, stored);
  if (q.dryRun) return { object: stored, uid: stored.metadata.uid };
  try {
    const left = await deps.store.delete<Stored>(r.type, namespace, name, {
      uid: stored.metadata.uid,
      ...(pre.resourceVersion ? { resourceVersion: pre.resourceVersion } : {}),
      now: new Date(deps.clock.now()).toISOString(),
    });
    return { ...(left ? { object: left } : {}), uid: stored.metadata.uid };
  } catch (err) {
    if (err instanceof ConflictError) throw conflict(r, name);
    if (isMagnetarError(err) && err.status === 404) throw notFound(r, name);
    throw err;
  }
}
