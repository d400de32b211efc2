import { z } from 'zod';
import { CloudError } from './cloud-error.ts';
import type { RequestOptions, Session } from './session.ts';

/**
 * What every typed client shares: the service's API root under its catalog endpoint,
 * answers checked against a zod schema, and list calls that follow the service's pagination.
 */

/** A pagination link as Nova, Neutron, Octavia and Cinder write them (`*_links`). */
const LinkSchema = z.looseObject({ rel: z.string(), href: z.string() });

/** Where a list answer says there is a next page. */
export type PageStyle =
  /** `{<key>_links: [{rel: "next", href}]}` (Nova, Neutron, Octavia, Cinder). */
  | 'links'
  /** `{next: "/v2/images?marker=…"}` (Glance). */
  | 'next';

type Query = NonNullable<RequestOptions['query']>;

/** Largest number of pages a single list call follows (a guard against link loops). */
const MAX_PAGES = 10_000;

/** Options of {@link ServiceApi}. */
export interface ServiceApiOptions {
  /** Service type in the catalog. */
  serviceType: string;
  /**
   * The API root to add after the catalog endpoint, given that endpoint: e.g. `/v2.0` for
   * Neutron when the catalog lists the bare service URL, or '' when it is already versioned.
   */
  root: (endpoint: string) => string;
  /** Headers sent on every call (microversions). */
  headers?: Record<string, string>;
}

/** Calls to one service on behalf of a typed client. */
export class ServiceApi {
  constructor(
    readonly session: Session,
    private readonly options: ServiceApiOptions,
  ) {}

  get serviceType(): string {
    return this.options.serviceType;
  }

  private async fullPath(path: string): Promise<string> {
    const endpoint = await this.session.endpoint(this.options.serviceType);
    return `${this.options.root(endpoint)}${path}`;
  }

  private merge(options: RequestOptions): RequestOptions {
    return this.options.headers
      ? { ...options, headers: { ...this.options.headers, ...(options.headers ?? {}) } }
      : options;
  }

  /** A call whose answer is validated by `schema`. */
  async call<S extends z.ZodType>(
    schema: S,
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<z.output<S>> {
    const full = await this.fullPath(path);
    const res = await this.session.request(this.options.serviceType, method, full, this.merge(options));
    return this.check(schema, res.body, method, full);
  }

  /** A call whose answer body does not matter (deletes, actions). Returns status and headers. */
  async send(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
    const full = await this.fullPath(path);
    return this.session.request(this.options.serviceType, method, full, this.merge(options));
  }

  /** Validate an answer body; a mismatch is a CloudError of kind `other`. */
  check<S extends z.ZodType>(schema: S, body: unknown, method: string, path: string): z.output<S> {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new CloudError({
      kind: 'other',
      service: this.options.serviceType,
      method,
      path: path.split('?')[0],
      cloudMessage: `unexpected answer: ${issues}`,
    });
  }

  /**
   * GET a collection and follow its pages. The next page's query is taken from the link the
   * service returns and sent to our own endpoint, so a service that writes links with an
   * internal host name still paginates.
   */
  async list<S extends z.ZodType>(
    itemSchema: S,
    path: string,
    key: string,
    style: PageStyle,
    query: Query = {},
  ): Promise<z.output<S>[]> {
    const pageSchema = memoSchema(itemSchema, `page:${key}`, () =>
      z.looseObject({
        [key]: z.array(itemSchema),
        [`${key}_links`]: z.array(LinkSchema).nullish(),
        next: z.string().nullish(),
      }),
    );
    const out: z.output<S>[] = [];
    let q: Query = query;
    const seen = new Set<string>();
    for (let page = 0; page < MAX_PAGES; page++) {
      const body = (await this.call(pageSchema, 'GET', path, { query: q })) as Record<string, unknown>;
      out.push(...(body[key] as z.output<S>[]));
      const href = nextHref(body, key, style);
      if (!href) break;
      const nextQuery = queryOf(href);
      const fingerprint = JSON.stringify(nextQuery);
      if (seen.has(fingerprint) || Object.keys(nextQuery).length === 0) break;
      seen.add(fingerprint);
      q = nextQuery;
    }
    return out;
  }
}

function nextHref(body: Record<string, unknown>, key: string, style: PageStyle): string | undefined {
  switch (style) {
    case 'links': {
      const links = body[`${key}_links`] as { rel: string; href: string }[] | null | undefined;
      return links?.find((l) => l.rel === 'next')?.href;
    }
    case 'next':
      return typeof body.next === 'string' && body.next !== '' ? body.next : undefined;
  }
}

function queryOf(href: string): Record<string, string | string[]> {
  const params = new URL(href, 'http://relative.invalid').searchParams;
  const out: Record<string, string | string[]> = {};
  for (const k of new Set(params.keys())) {
    const all = params.getAll(k);
    out[k] = all.length === 1 ? all[0]! : all;
  }
  return out;
}

/** Path segment, percent-encoded. */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

/** '' when the endpoint path already ends in one of `versions`, else `/<first version>`. */
export function versionRoot(endpoint: string, versions: string[]): string {
  const path = new URL(endpoint).pathname.replace(/\/+$/, '');
  return versions.some((v) => path.endsWith(`/${v}`)) ? '' : `/${versions[0]}`;
}

/** The single match of a name-or-id look-up, `'ambiguous'` for several, undefined for none. */
export function single<T extends { id: string }>(
  items: T[],
  nameOrId: string,
  nameOf: (t: T) => string | null | undefined,
): T | 'ambiguous' | undefined {
  const byId = items.find((i) => i.id === nameOrId);
  if (byId) return byId;
  const named = items.filter((i) => nameOf(i) === nameOrId);
  if (named.length > 1) return 'ambiguous';
  return named[0];
}

/**
 * Schemas built around an item schema, made once per (item schema, use): zod compiles a schema
 * on its first parse, and these wrap every answer of a busy client.
 */
const wrappers = new WeakMap<z.ZodType, Map<string, z.ZodType>>();

function memoSchema<W extends z.ZodType>(item: z.ZodType, use: string, build: () => W): W {
  let byUse = wrappers.get(item);
  if (!byUse) wrappers.set(item, (byUse = new Map<string, z.ZodType>()));
  let w = byUse.get(use);
  if (!w) byUse.set(use, (w = build()));
  return w as W;
}

/** A schema for `{<key>: item}` answers that yields the item. */
export function one<T>(key: string, schema: z.ZodType<T>) {
  return memoSchema(schema, `one:${key}`, () => z.object({ [key]: schema }).transform((o) => o[key] as T));
}

/** The answer `{"<key>": [...]}` of a bulk create, as the list of items. */
export function several<T>(key: string, schema: z.ZodType<T>) {
  return memoSchema(schema, `several:${key}`, () =>
    z.object({ [key]: z.array(schema) }).transform((o) => o[key] as T[]),
  );
}

/** Drop undefined values (for request bodies). */
export function compact<T extends Record<string, unknown>>(obj: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out as Partial<T>;
}

/** Tags as the `tags` query filter wants them: comma-separated, all must match. */
export function tagsQuery(tags: readonly string[] | undefined): string | undefined {
  return tags && tags.length > 0 ? tags.join(',') : undefined;
}

/** Zod helpers for the shapes OpenStack answers share. */
export const wire = {
  str: z.string(),
  /** A string that may be null or absent; read as undefined. */
  optStr: z
    .string()
    .nullish()
    .transform((v) => v ?? undefined),
  /** Tags: absent or null means none. */
  tags: z
    .array(z.string())
    .nullish()
    .transform((v) => v ?? []),
  /** `[{id}]` references (Octavia). */
  idRefs: z
    .array(z.looseObject({ id: z.string() }))
    .nullish()
    .transform((v) => (v ?? []).map((r) => r.id)),
};
