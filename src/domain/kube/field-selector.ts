import { InputError } from '../errors.ts';

/**
 * Field selectors (`?fieldSelector=spec.nodeName=node-1,status.phase!=Succeeded`), as
 * `kubectl drain` and `kubectl get --field-selector` send them.
 */

/** One requirement. */
export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

/** A parsed field selector: every requirement must hold. */
export type FieldSelector = FieldRequirement[];

/**
 * Parse `a=b,c==d,e!=f`. `supported` lists the fields the resource allows (Kubernetes
 * refuses others with 400 "field label not supported"); `metadata.name` and
 * `metadata.namespace` are always allowed.
 */
export function parseFieldSelector(
  text: string | undefined,
  supported: readonly string[] = [],
): FieldSelector {
  const out: FieldSelector = [];
  if (!text || text.trim() === '') return out;
  for (const raw of text.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const m = /^([^!=\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw new InputError(`invalid field selector: "${part}"`, { code: 'BadFieldSelector' });
    const field = m[1]!;
    if (field !== 'metadata.name' && field !== 'metadata.namespace' && !supported.includes(field)) {
      throw new InputError(`field label not supported: ${field}`, { code: 'BadFieldSelector' });
    }
    out.push({ field, operator: m[2] === '!=' ? '!=' : '=', value: m[3]!.trim() });
  }
  return out;
}

/** The string value of a dotted field path in an object ('' when absent; booleans as "true"/"false"). */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const key of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return '';
    cur = (cur as Record<string, unknown>)[key];
  }
  if (cur === undefined || cur === null) return '';
  if (typeof cur === 'string') return cur;
  if (typeof cur === 'number' || typeof cur === 'boolean') return String(cur);
  return JSON.stringify(cur);
}

/** True when `obj` satisfies every requirement. */
export function matchesFieldSelector(obj: unknown, selector: FieldSelector): boolean {
  return selector.every((r) => (fieldValue(obj, r.field) === r.value) === (r.operator === '='));
}
