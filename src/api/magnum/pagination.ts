import { InputError } from '../../domain/index.ts';

/**
 * Magnum's list parameters: `limit` (≤ 0 → 400, capped at 1000), `marker` (uuid of the last
 * item seen; quotas use their integer id), `sort_key` (default `id`, i.e. creation order) and
 * `sort_dir` (`asc`|`desc`), and the `next` link of a full page.
 */

/** Magnum's `[api] max_limit`. */
export const MAX_LIMIT = 1000;

export interface ListQuery {
  limit: number;
  marker?: string;
  sortKey: string;
  sortDir: 'asc' | 'desc';
}

export type Query = Record<string, string | string[] | undefined>;

/** One query parameter (the last, when repeated). */
export function param(q: Query, name: string): string | undefined {
  const v = q[name];
  return Array.isArray(v) ? v.at(-1) : v;
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** True when `s` looks like a UUID (with or without dashes), as oslo's `is_uuid_like`. */
export function isUuidLike(s: string): boolean {
  return UUID.test(s);
}

/** Parse an integer query parameter, or 400 naming it. */
export function intParam(q: Query, name: string): number | undefined {
  const raw = param(q, name);
  if (raw === undefined) return undefined;
  if (!/^[+-]?\d+$/.test(raw.trim())) {
    throw new InputError(`Invalid input for field/attribute ${name}: it must be an integer (got '${raw}').`, {
      code: 'Invalid',
    });
  }
  return Number(raw);
}

/**
 * Read `limit`, `marker`, `sort_key`, `sort_dir`. `sortKeys` lists the keys allowed besides
 * `id`; `marker` must be a uuid unless `markerIsInt`.
 */
export function parseListQuery(
  q: Query,
  sortKeys: readonly string[],
  options: { markerIsInt?: boolean } = {},
): ListQuery {
  const rawLimit = intParam(q, 'limit');
  if (rawLimit !== undefined && rawLimit <= 0)
    throw new InputError('Limit must be positive', { code: 'Invalid' });
  const limit = Math.min(rawLimit ?? MAX_LIMIT, MAX_LIMIT);
  const marker = param(q, 'marker');
  if (marker !== undefined && marker !== '') {
    if (options.markerIsInt ? !/^\d+$/.test(marker) : !isUuidLike(marker)) {
      throw new InputError(
        `Invalid input for field/attribute marker: expected ${options.markerIsInt ? 'the integer id' : 'the UUID'} of the last item of the previous page (got '${marker}').`,
        { code: 'InvalidUUID' },
      );
    }
  }
  const sortDir = param(q, 'sort_dir') ?? 'asc';
  if (sortDir !== 'asc' && sortDir !== 'desc') {
    throw new InputError(`Invalid sort direction: ${sortDir}. Acceptable values are 'asc' or 'desc'`, {
      code: 'Invalid',
    });
  }
  const sortKey = param(q, 'sort_key') ?? 'id';
  if (sortKey !== 'id' && !sortKeys.includes(sortKey)) {
    throw new InputError(
      `The sort_key value "${sortKey}" is an invalid field for sorting; valid keys: id, ${sortKeys.join(', ')}.`,
      {
        code: 'InvalidParameterValue',
      },
    );
  }
  return { limit, ...(marker ? { marker } : {}), sortKey, sortDir };
}

function rank(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'boolean') return 1;
  if (typeof v === 'number') return 2;
  return 3;
}

/** Compare two wire values as a database would (nulls first in ascending order). */
export function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (ra === 0) return 0;
  const sa = typeof a === 'string' ? a : JSON.stringify(a);
  const sb = typeof b === 'string' ? b : JSON.stringify(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/**
 * One page of an in-memory list: `items` in creation order, each with its wire form and id;
 * sorted by `sort_key` (stable on creation order), started after `marker`, cut at `limit`.
 * Returns undefined when the marker is not in the list.
 */
export function pageOf<T>(
  items: readonly { id: string; wire: Record<string, unknown>; item: T }[],
  q: ListQuery,
) {
  const dir = q.sortDir === 'desc' ? -1 : 1;
  const indexed = items.map((x, i) => ({ ...x, i }));
  indexed.sort((a, b) => {
    const c = q.sortKey === 'id' ? 0 : compareValues(a.wire[q.sortKey], b.wire[q.sortKey]);
    return (c !== 0 ? c : a.i - b.i) * dir;
  });
  let start = 0;
  if (q.marker !== undefined) {
    const at = indexed.findIndex((x) => x.id === q.marker);
    if (at < 0) return undefined;
    start = at + 1;
  }
  return indexed.slice(start, start + q.limit);
}

/** Magnum's `next` link when the page is full: `<base>/v1/<path>?sort_key=..&sort_dir=..[&extra]&limit=N&marker=<last>`. */
export function nextLink(
  base: string,
  path: string,
  q: ListQuery,
  pageLength: number,
  lastId: string | undefined,
  extra: Record<string, string> = {},
): string | undefined {
  if (pageLength === 0 || pageLength < q.limit || lastId === undefined) return undefined;
  const args = new URLSearchParams({ sort_key: q.sortKey, sort_dir: q.sortDir, ...extra });
  return `${base}/v1/${path}?${args.toString()}&limit=${q.limit}&marker=${encodeURIComponent(lastId)}`;
}
