import { InputError } from './errors.ts';

/** One requirement of a Kubernetes label selector. */
export interface LabelRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values: string[];
}

/** A parsed label selector: all requirements must hold. */
export type LabelSelector = LabelRequirement[];

/** The structured selector form used in object specs (`matchLabels`, `matchExpressions`). */
export interface SelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: LabelRequirement['operator']; values?: string[] }[];
}

/** Convert a `matchLabels`/`matchExpressions` selector into requirements. */
export function selectorFromSpec(spec: SelectorSpec | undefined): LabelSelector {
  const reqs: LabelSelector = [];
  for (const [key, value] of Object.entries(spec?.matchLabels ?? {})) {
    reqs.push({ key, operator: 'In', values: [value] });
  }
  for (const e of spec?.matchExpressions ?? [])
    reqs.push({ key: e.key, operator: e.operator, values: e.values ?? [] });
  return reqs;
}

const KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/**
 * Parse the string form used by `kubectl -l`: `a=b,c!=d,e in (x,y),f notin (z),g,!h`.
 * Throws InputError on malformed input.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const reqs: LabelSelector = [];
  const s = text.trim();
  if (s === '') return reqs;
  // split on commas that are not inside parentheses
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  for (const raw of parts) {
    const p = raw.trim();
    let m: RegExpMatchArray | null;
    if ((m = p.match(/^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const values = m[3]!
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      reqs.push({ key: checkKey(m[1]!), operator: m[2] === 'in' ? 'In' : 'NotIn', values });
    } else if ((m = p.match(/^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/))) {
      reqs.push({ key: checkKey(m[1]!), operator: m[2] === '!=' ? 'NotIn' : 'In', values: [m[3]!] });
    } else if ((m = p.match(/^!\s*(\S+)$/))) {
      reqs.push({ key: checkKey(m[1]!), operator: 'DoesNotExist', values: [] });
    } else if ((m = p.match(/^(\S+)$/))) {
      reqs.push({ key: checkKey(m[1]!), operator: 'Exists', values: [] });
    } else {
      throw new InputError(`unable to parse requirement: "${p}"`, { code: 'BadLabelSelector' });
    }
  }
  return reqs;
}

function checkKey(key: string): string {
  if (!KEY.test(key)) throw new InputError(`invalid label key "${key}"`, { code: 'BadLabelSelector' });
  return key;
}

/** True when `labels` satisfy every requirement. */
export function matchesSelector(
  labels: Record<string, string> | undefined,
  selector: LabelSelector,
): boolean {
  const l = labels ?? {};
  for (const r of selector) {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = l[r.key];
    switch (r.operator) {
      case 'In':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case 'NotIn':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}
