import { InputError, UnprocessableError } from '../errors.ts';

/**
 * The three patch formats `kubectl patch`/`cordon`/`label` send:
 * - JSON merge patch (RFC 7386, `application/merge-patch+json`);
 * - strategic merge patch (`application/strategic-merge-patch+json`), approximated: a merge
 *   patch in which lists with a known merge key (containers by name, conditions by type,
 *   ownerReferences by uid, …) are merged element by element, `finalizers` are unioned, and
 *   `$patch: delete|replace` and `$deleteFromPrimitiveList/<field>` directives are honoured;
 *   other `$` directives are ignored;
 * - JSON patch (RFC 6902, `application/json-patch+json`).
 */

/** Patch content types. */
export type PatchType = 'merge' | 'strategic' | 'json';

/** Which patch format a Content-Type names, or undefined (→ 415). */
export function patchTypeOf(contentType: string | undefined): PatchType | undefined {
  const ct = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  switch (ct) {
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/json-patch+json':
      return 'json';
    default:
      return undefined;
  }
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** RFC 7386 JSON merge patch. Returns a new value; `target` is not modified. */
export function jsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete result[k];
    else result[k] = jsonMergePatch(result[k], v);
  }
  return result;
}

/** Merge keys of the list fields strategic merge patch merges by element. */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  env: 'name',
  ports: 'containerPort',
  conditions: 'type',
  ownerReferences: 'uid',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  addresses: 'type',
};
const UNION_LISTS = new Set(['finalizers']);

/** Strategic merge patch (approximation described in the module comment). */
export function strategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  if (patch.$patch === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return stripDirectives(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = result[field];
      if (Array.isArray(cur) && Array.isArray(v)) result[field] = cur.filter((x) => !v.includes(x as Json));
      continue;
    }
    if (k.startsWith('$')) continue;
    if (v === null) {
      delete result[k];
      continue;
    }
    const cur = result[k];
    if (Array.isArray(v) && Array.isArray(cur) && MERGE_KEYS[k]) result[k] = mergeList(cur, v, MERGE_KEYS[k]);
    else if (Array.isArray(v) && Array.isArray(cur) && UNION_LISTS.has(k))
      result[k] = [...new Set<unknown>([...(cur as unknown[]), ...v])];
    else if (Array.isArray(v)) result[k] = v.map(stripDirectives);
    else {
      const merged = strategicMergePatch(cur, v);
      if (merged === undefined) delete result[k];
      else result[k] = merged;
    }
  }
  return result;
}

function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !k.startsWith('$'))
      .map(([k, x]) => [k, stripDirectives(x)]),
  );
}

function mergeList(current: unknown[], patch: unknown[], key: string): unknown[] {
  const out = [...current];
  for (const item of patch) {
    if (!isObject(item) || !(key in item)) {
      out.push(stripDirectives(item));
      continue;
    }
    const i = out.findIndex((x) => isObject(x) && x[key] === item[key]);
    if (item.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) out[i] = strategicMergePatch(out[i], item);
    else out.push(stripDirectives(item));
  }
  return out;
}

/** One RFC 6902 operation. */
export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new InputError(`invalid JSON pointer "${path}"`, { code: 'BadPatch' });
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

function parentOf(
  doc: unknown,
  tokens: string[],
  path: string,
): { parent: Record<string, unknown> | unknown[]; key: string } {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined)
      throw new UnprocessableError(`the path "${path}" does not exist`, { code: 'BadPatch' });
  }
  if (!Array.isArray(cur) && !isObject(cur))
    throw new UnprocessableError(`the path "${path}" does not exist`, { code: 'BadPatch' });
  return { parent: cur, key: tokens[tokens.length - 1]! };
}

function getAt(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const t of pointer(path)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else return undefined;
  }
  return cur;
}

function removeAt(doc: unknown, path: string): unknown {
  const { parent, key } = parentOf(doc, pointer(path), path);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!Number.isInteger(i) || i < 0 || i >= parent.length)
      throw new UnprocessableError(`the path "${path}" does not exist`, { code: 'BadPatch' });
    return parent.splice(i, 1)[0];
  }
  if (!(key in parent))
    throw new UnprocessableError(`the path "${path}" does not exist`, { code: 'BadPatch' });
  const v = parent[key];
  delete parent[key];
  return v;
}

function addAt(doc: unknown, path: string, value: unknown): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) return value;
  const { parent, key } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) {
    const i = key === '-' ? parent.length : Number(key);
    if (!Number.isInteger(i) || i < 0 || i > parent.length)
      throw new UnprocessableError(`the path "${path}" is out of range`, { code: 'BadPatch' });
    parent.splice(i, 0, value);
  } else parent[key] = value;
  return doc;
}

/** Apply an RFC 6902 JSON patch. Returns a new document; UnprocessableError when a path is missing or a test fails. */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops))
    throw new InputError('a JSON patch must be an array of operations', { code: 'BadPatch' });
  let doc = clone(target);
  for (const raw of ops as JsonPatchOp[]) {
    if (!isObject(raw) || typeof raw.path !== 'string')
      throw new InputError('each JSON patch operation needs "op" and "path"', { code: 'BadPatch' });
    switch (raw.op) {
      case 'add':
        doc = addAt(doc, raw.path, clone(raw.value));
        break;
      case 'remove':
        removeAt(doc, raw.path);
        break;
      case 'replace':
        if (raw.path === '') doc = clone(raw.value);
        else {
          removeAt(doc, raw.path);
          doc = addAt(doc, raw.path, clone(raw.value));
        }
        break;
      case 'move': {
        const v = removeAt(doc, String(raw.from));
        doc = addAt(doc, raw.path, v);
        break;
      }
      case 'copy':
        doc = addAt(doc, raw.path, clone(getAt(doc, String(raw.from))));
        break;
      case 'test':
        if (JSON.stringify(getAt(doc, raw.path)) !== JSON.stringify(raw.value)) {
          throw new UnprocessableError(`test failed at "${raw.path}"`, { code: 'BadPatch' });
        }
        break;
      default:
        throw new InputError(`unknown JSON patch operation "${String((raw as { op?: unknown }).op)}"`, {
          code: 'BadPatch',
        });
    }
  }
  return doc;
}

/** Apply a patch of the given type. */
export function applyPatch(type: PatchType, target: unknown, patch: unknown): unknown {
  switch (type) {
    case 'merge':
      return jsonMergePatch(target, patch);
    case 'strategic':
      return strategicMergePatch(target, patch);
    case 'json':
      return jsonPatch(target, patch);
  }
}
