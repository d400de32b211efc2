import type { AnyObject, ObjectStore } from '../../store/index.ts';
import { sameJson } from '../../domain/index.ts';
import { isAlreadyExists } from '../common/writes.ts';
import type { DesiredObject } from './magnum-render.ts';

/**
 * Make one object look like its desired form: create it when missing; otherwise update spec,
 * labels and annotations when they differ. `keep` lists spec fields others own (e.g. the API
 * endpoint the Cluster controller fills in), carried over from the stored object.
 */
export async function applyObject<T extends AnyObject>(
  store: ObjectStore,
  desired: DesiredObject,
  options: { keep?: readonly string[]; existing?: T | undefined; lookedUp?: boolean } = {},
): Promise<T> {
  const o = desired.object;
  const name = o.metadata.name!;
  const existing = options.lookedUp
    ? options.existing
    : await store.get<T>(desired.type, o.metadata.namespace, name);
  if (!existing) {
    try {
      return await store.create<T>(o);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const now = await store.get<T>(desired.type, o.metadata.namespace, name);
      if (!now) throw err;
      return now;
    }
  }
  const spec = { ...o.spec };
  for (const k of options.keep ?? []) {
    const v = (existing.spec as Record<string, unknown>)[k];
    if (v !== undefined) spec[k] = v;
  }
  const labels = { ...existing.metadata.labels, ...(o.metadata.labels ?? {}) };
  const annotations = { ...existing.metadata.annotations, ...(o.metadata.annotations ?? {}) };
  // Annotations the desired form drops on purpose (e.g. a health check's pause).
  for (const k of Object.keys(existing.metadata.annotations)) {
    if (k === 'cluster.x-k8s.io/paused' && !(o.metadata.annotations && k in o.metadata.annotations))
      delete annotations[k];
  }
  if (
    sameJson(spec, existing.spec) &&
    sameJson(labels, existing.metadata.labels) &&
    sameJson(annotations, existing.metadata.annotations)
  ) {
    return existing;
  }
  return store.update<T>({
    ...existing,
    metadata: { ...existing.metadata, labels, annotations },
    spec: spec,
  });
}
