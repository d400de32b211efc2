import { InputError } from '../../domain/index.ts';
import { parsePythonLiteral, pyToJson } from './python-literal.ts';
import { PatchSchema, parseBody, type PatchOp } from './schemas.ts';

/**
 * Magnum's JSON-Patch (RFC 6902 `add`/`replace`/`remove`) with its extra rules: internal
 * attributes cannot be touched, mandatory ones cannot be removed, `add` at the root only fills
 * a null attribute, and `replace` on dictionary attributes accepts the Python literal string
 * the `openstack coe ... update` command sends (`"{'a': 'b'}"`).
 */

/** Paths every Magnum resource treats as internal. */
export const COMMON_INTERNAL = [
  '/created_at',
  '/id',
  '/links',
  '/updated_at',
  '/uuid',
  '/project_id',
  '/user_id',
];

export interface PatchRules {
  internal: readonly string[];
  nonRemovable: readonly string[];
  /** Paths whose string value is a Python literal to evaluate on `replace`. */
  literalPaths: readonly string[];
  /** What is patched, for messages ("cluster template"). */
  what: string;
}

/** Parse and check a PATCH body (a non-empty list of operations). */
export function parsePatch(body: unknown, what: string): PatchOp[] {
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && !Buffer.isBuffer(body)) {
    throw new InputError(
      `The ${what} update must be a JSON-Patch list such as [{"op": "replace", "path": "/node_count", "value": 3}].`,
      {
        code: 'Invalid',
      },
    );
  }
  return parseBody(PatchSchema, body, `${what} patch`);
}

function patchError(ops: readonly PatchOp[], reason: string): InputError {
  return new InputError(`Couldn't apply patch: ${reason}. Patch: ${JSON.stringify(ops)}`, {
    code: 'PatchError',
  });
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

function unescape(seg: string): string {
  return seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Apply `ops` to a copy of `doc` under Magnum's rules; 400 with the reason otherwise. */
export function applyMagnumPatch(
  doc: Record<string, unknown>,
  ops: readonly PatchOp[],
  rules: PatchRules,
): Record<string, unknown> {
  for (const op of ops) {
    if (rules.internal.includes(op.path)) {
      throw new InputError(`'${op.path}' is an internal attribute and can not be updated`, {
        code: 'InternalAttribute',
      });
    }
    if (op.op === 'remove' && rules.nonRemovable.includes(op.path)) {
      throw new InputError(`'${op.path}' is a mandatory attribute and can not be removed`, {
        code: 'MandatoryAttribute',
      });
    }
    if (op.op !== 'remove' && (op.value === undefined || op.value === null)) {
      throw new InputError(`'add' and 'replace' operations needs value (${op.op} ${op.path})`, {
        code: 'Invalid',
      });
    }
  }
  const out = clone(doc);
  for (const op of ops) {
    const segs = op.path.slice(1).split('/').map(unescape);
    const root = segs[0]!;
    if (op.op === 'add' && segs.length === 1) {
      if (!(root in out)) {
        throw new InputError(
          `Adding a new attribute ${op.path} to the root of the resource is not allowed.`,
          { code: 'PatchError' },
        );
      }
      if (out[root] !== null && out[root] !== undefined) {
        throw new InputError(
          `The attribute ${op.path} has existed, please use 'replace' operation instead.`,
          { code: 'PatchError' },
        );
      }
    }
    let value = op.value;
    if (op.op === 'replace' && rules.literalPaths.includes(op.path) && typeof value === 'string') {
      try {
        value = pyToJson(parsePythonLiteral(value));
      } catch (err) {
        throw patchError(
          ops,
          `the value of ${op.path} is not a valid dictionary literal (${(err as Error).message})`,
        );
      }
    }
    // walk to the parent container
    let parent: unknown = out;
    for (const seg of segs.slice(0, -1)) {
      const next: unknown = Array.isArray(parent)
        ? parent[Number(seg)]
        : (parent as Record<string, unknown>)[seg];
      if (next === null || typeof next !== 'object')
        throw patchError(ops, `the path ${op.path} does not exist`);
      parent = next;
    }
    const key = segs.at(-1)!;
    if (Array.isArray(parent)) {
      const idx = key === '-' ? parent.length : Number(key);
      if (!/^\d+$/.test(key) && key !== '-') throw patchError(ops, `${key} is not an index of ${op.path}`);
      const exists = idx < parent.length;
      switch (op.op) {
        case 'add':
          if (idx > parent.length) throw patchError(ops, `index ${key} is out of range`);
          parent.splice(idx, 0, clone(value));
          break;
        case 'replace':
          if (!exists) throw patchError(ops, `the path ${op.path} does not exist`);
          parent[idx] = clone(value);
          break;
        case 'remove':
          if (!exists) throw patchError(ops, `the path ${op.path} does not exist`);
          parent.splice(idx, 1);
          break;
      }
      continue;
    }
    const obj = parent as Record<string, unknown>;
    const exists = Object.prototype.hasOwnProperty.call(obj, key);
    switch (op.op) {
      case 'add':
        obj[key] = clone(value);
        break;
      case 'replace':
        if (!exists) throw patchError(ops, `the path ${op.path} does not exist`);
        obj[key] = clone(value);
        break;
      case 'remove':
        if (!exists) throw patchError(ops, `the path ${op.path} does not exist`);
        if (segs.length === 1) obj[key] = null;
        else delete obj[key];
        break;
    }
  }
  return out;
}

/** Top-level attributes whose value differs between two documents. */
export function changedAttributes(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => !sameValue(before[k] ?? null, after[k] ?? null));
}

/** Deep equality of JSON values (object key order ignored). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao);
  return (
    ak.length === Object.keys(bo).length &&
    ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && sameValue(ao[k], bo[k]))
  );
}
