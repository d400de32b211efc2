import { InputError } from '../../domain/index.ts';
import type { LabelSelector } from '../../domain/index.ts';

/** SQL text helpers of the PostgreSQL engine. Values always travel as parameters, never in the text. */

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Check a schema name and return it quoted. Only plain identifiers are accepted. */
export function quoteSchema(schema: string): string {
  if (!IDENT.test(schema)) {
    throw new InputError(
      `invalid PostgreSQL schema name "${schema}": use letters, digits and _ (at most 63)`,
      {
        code: 'BadSchema',
      },
    );
  }
  return `"${schema}"`;
}

/** The NOTIFY channel of a schema (at most 63 bytes, as PostgreSQL requires). */
export function channelOf(schema: string): string {
  const channel = `magnetar_changes_${schema}`;
  return channel.length <= 63 ? channel : `magnetar_changes_${fnv1a(schema)}`;
}

function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16);
}

/** Collects positional parameters while a statement is built. */
export class Params {
  readonly values: unknown[] = [];
  /** Add a value, return its placeholder. */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** SQL conditions on the `labels` JSONB column equivalent to `matchesSelector`. */
export function selectorSql(selector: LabelSelector, p: Params): string[] {
  return selector.map((r) => {
    switch (r.operator) {
      case 'In':
        return `(labels ->> ${p.add(r.key)}) = ANY(${p.add(r.values)}::text[])`;
      case 'NotIn':
        return `NOT coalesce((labels ->> ${p.add(r.key)}) = ANY(${p.add(r.values)}::text[]), false)`;
      case 'Exists':
        return `(labels ? ${p.add(r.key)})`;
      case 'DoesNotExist':
        return `NOT (labels ? ${p.add(r.key)})`;
    }
  });
}
