import type { FastifyRequest } from 'fastify';
import { asText, baseUrl, qAll } from '../core/http.ts';
import { labelValue } from '../core/labels.ts';
import { neutronErrors as E } from './errors.ts';

type View = Record<string, unknown>;

const RESERVED = new Set([
  'fields',
  'limit',
  'marker',
  'page_reverse',
  'sort_key',
  'sort_dir',
  'tags',
  'tags-any',
  'not-tags',
  'not-tags-any',
]);

function scalarMatches(value: unknown, wanted: string): boolean {
  if (value === null || value === undefined) return wanted === '' || wanted.toLowerCase() === 'none';
  if (typeof value === 'boolean') return String(value) === wanted.toLowerCase();
  return asText(value) === wanted;
}

function matches(value: unknown, wanted: string): boolean {
  if (Array.isArray(value)) {
    if (value.length > 0 && typeof value[0] === 'object') {
      // fixed_ips=ip_address=10.0.0.5 / fixed_ips=subnet_id=…
      const eq = wanted.indexOf('=');
      if (eq < 0) return false;
      const k = wanted.slice(0, eq);
      const v = wanted.slice(eq + 1);
      return value.some(
        (o) => o && typeof o === 'object' && scalarMatches((o as Record<string, unknown>)[k], v),
      );
    }
    return value.some((x) => scalarMatches(x, wanted));
  }
  return scalarMatches(value, wanted);
}

function tagsOf(v: View): string[] {
  return Array.isArray(v.tags) ? (v.tags as string[]) : [];
}

function splitTags(req: FastifyRequest, name: string): string[] {
  return qAll(req, name)
    .flatMap((s) => s.split(','))
    .filter((s) => s !== '');
}

/** Neutron's attribute filters, tag filters (`tags`, `tags-any`, `not-tags`, `not-tags-any`). */
export function neutronFilter(req: FastifyRequest, views: View[]): View[] {
  const query = req.query as Record<string, string | string[] | undefined>;
  let out = views;
  for (const key of Object.keys(query)) {
    if (RESERVED.has(key)) continue;
    const wanted = qAll(req, key);
    if (wanted.length === 0) continue;
    out = out.filter((v) => !(key in v) || wanted.some((w) => matches(v[key], w)));
  }
  const all = splitTags(req, 'tags');
  const any = splitTags(req, 'tags-any');
  const notAll = splitTags(req, 'not-tags');
  const notAny = splitTags(req, 'not-tags-any');
  if (all.length) out = out.filter((v) => all.every((t) => tagsOf(v).includes(t)));
  if (any.length) out = out.filter((v) => any.some((t) => tagsOf(v).includes(t)));
  if (notAll.length) out = out.filter((v) => !notAll.every((t) => tagsOf(v).includes(t)));
  if (notAny.length) out = out.filter((v) => !notAny.some((t) => tagsOf(v).includes(t)));
  return out;
}

/**
 * The rows whose records pass the query's filters on `fields`, applied before the views are
 * built: the same test {@link neutronFilter} makes on the views, for fields a view copies from
 * its record unchanged. A lookup by name (`GET /routers?name=x`) then builds one view, not one
 * per row of the project; some views read more rows (a load balancer's tree, a floating IP's port).
 */
export function prefilter<T extends { rec: object }>(
  req: FastifyRequest,
  rows: T[],
  fields: readonly (keyof T['rec'] & string)[],
): T[] {
  let out = rows;
  for (const f of fields) {
    const wanted = qAll(req, f);
    if (wanted.length === 0) continue;
    out = out.filter((r) => wanted.some((w) => matches((r.rec as Record<string, unknown>)[f], w)));
  }
  return out;
}

/**
 * Labels that narrow a list to the rows a query filter can match: the first of `fields` the
 * query asks for with one value, as the index label of that name (see the repos' index). The
 * filter itself still runs on every row read, so a label shortened by {@link labelValue} only
 * means a few more rows read. Undefined when the query filters on none of them.
 */
export function narrowing(
  req: FastifyRequest,
  fields: readonly string[],
): Record<string, string> | undefined {
  for (const f of fields) {
    const wanted = qAll(req, f);
    if (wanted.length === 1) return { [f]: labelValue(wanted[0]!) };
  }
  return undefined;
}

/** Keep only the requested `fields` (Neutron always answers exactly those). */
export function projectFields(req: FastifyRequest, view: View): View {
  const fields = qAll(req, 'fields').flatMap((f) => f.split(','));
  if (fields.length === 0) return view;
  return Object.fromEntries(fields.filter((f) => f in view).map((f) => [f, view[f]]));
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return asText(a) < asText(b) ? -1 : 1;
}

/** Filter, sort, paginate (limit/marker/page_reverse) and project a Neutron collection. */
export function neutronList(req: FastifyRequest, collection: string, views: View[]): Record<string, unknown> {
  let items = neutronFilter(req, views);
  const keys = qAll(req, 'sort_key');
  const dirs = qAll(req, 'sort_dir');
  if (keys.length > 0) {
    for (const d of dirs)
      if (d !== 'asc' && d !== 'desc') throw E.badRequest('sort', `sort_dir must be asc or desc, not ${d}`);
    items = [...items].sort((a, b) => {
      for (let i = 0; i < keys.length; i++) {
        const c = compare(a[keys[i]!], b[keys[i]!]);
        if (c !== 0) return dirs[i] === 'desc' ? -c : c;
      }
      return 0;
    });
  }
  const limitText = qAll(req, 'limit')[0];
  const marker = qAll(req, 'marker')[0];
  const reverse = qAll(req, 'page_reverse')[0]?.toLowerCase() === 'true';
  const body: Record<string, unknown> = {};
  if (reverse) items = [...items].reverse();
  if (marker !== undefined) {
    const i = items.findIndex((v) => v.id === marker);
    if (i < 0) throw E.badRequest('marker', `marker ${marker} not found`);
    items = items.slice(i + 1);
  }
  if (limitText !== undefined && limitText !== '' && Number(limitText) > 0) {
    const limit = Number(limitText);
    if (!Number.isInteger(limit)) throw E.badRequest('limit', `limit must be an integer`);
    const more = items.length > limit;
    items = items.slice(0, limit);
    const links: { rel: string; href: string }[] = [];
    const path = `${baseUrl(req)}${req.url.split('?')[0]}`;
    const last = items[items.length - 1];
    if (more && last) links.push({ rel: 'next', href: `${path}?limit=${limit}&marker=${String(last.id)}` });
    if (marker !== undefined && items[0]) {
      links.push({
        rel: 'previous',
        href: `${path}?limit=${limit}&marker=${String(items[0].id)}&page_reverse=True`,
      });
    }
    if (links.length) body[`${collection}_links`] = links;
  }
  if (reverse) items = items.reverse();
  body[collection] = items.map((v) => projectFields(req, v));
  return body;
}
