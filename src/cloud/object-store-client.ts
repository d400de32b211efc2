import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Session } from './session.ts';
import { ServiceApi, seg } from './service-api.ts';

/** Swift (object-store v1): containers and objects, e.g. for etcd backups. */

export interface ContainerInfo {
  name: string;
  objectCount: number;
  bytesUsed: number;
  /** `X-Container-Meta-*` headers, keys lower-case without the prefix. */
  metadata: Record<string, string>;
}

export interface ObjectInfo {
  name: string;
  sizeBytes: number;
  etag?: string;
  contentType?: string;
  lastModified?: string;
  /** `X-Object-Meta-*` headers (only from HEAD/GET), keys lower-case without the prefix. */
  metadata: Record<string, string>;
}

export interface ObjectData extends ObjectInfo {
  data: Buffer;
}

export interface PutObjectOptions {
  /** @default application/octet-stream */
  contentType?: string;
  /** Stored as `X-Object-Meta-<key>`. */
  metadata?: Record<string, string>;
  /** Let Swift delete the object after this many seconds (`X-Delete-After`). */
  deleteAfterSeconds?: number;
  headers?: Record<string, string>;
}

/** The Swift calls backups need. */
export interface ObjectStoreClient {
  listContainers(filter?: { prefix?: string }): Promise<ContainerInfo[]>;
  /** Create (or update the metadata of) a container; idempotent. */
  createContainer(
    name: string,
    options?: { metadata?: Record<string, string>; headers?: Record<string, string> },
  ): Promise<void>;
  headContainer(name: string): Promise<ContainerInfo>;
  /** Delete an empty container (409 conflict when it still holds objects). */
  deleteContainer(name: string): Promise<void>;
  listObjects(container: string, filter?: { prefix?: string }): Promise<ObjectInfo[]>;
  /** Upload; Swift checks the data against the MD5 sent along (422 when corrupted on the way). */
  putObject(
    container: string,
    name: string,
    data: Buffer | string,
    options?: PutObjectOptions,
  ): Promise<{ etag: string }>;
  getObject(container: string, name: string): Promise<ObjectData>;
  headObject(container: string, name: string): Promise<ObjectInfo>;
  deleteObject(container: string, name: string): Promise<void>;
}

/** Largest listing page Swift serves by default. */
const PAGE = 10_000;

const ContainerListing = z.array(
  z.looseObject({ name: z.string(), count: z.number().nullish(), bytes: z.number().nullish() }),
);
const ObjectListing = z.array(
  z.looseObject({
    name: z.string().optional(),
    subdir: z.string().optional(),
    bytes: z.number().nullish(),
    hash: z.string().nullish(),
    content_type: z.string().nullish(),
    last_modified: z.string().nullish(),
  }),
);

function objectPath(container: string, name: string): string {
  return `/${seg(container)}/${name.split('/').map(seg).join('/')}`;
}

function metaOf(headers: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = v;
  return out;
}

function metaHeaders(metadata: Record<string, string> | undefined, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata ?? {})) out[`${prefix}${k}`] = v;
  return out;
}

function num(value: string | undefined): number {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

/** Swift over a session. */
export class SwiftObjectStoreClient implements ObjectStoreClient {
  private readonly api: ServiceApi;

  constructor(session: Session) {
    this.api = new ServiceApi(session, { serviceType: 'object-store', root: () => '' });
  }

  private async pages<S extends z.ZodType<unknown[]>>(
    schema: S,
    path: string,
    query: Record<string, string | undefined>,
    nameOf: (item: z.output<S>[number]) => string | undefined,
  ): Promise<z.output<S>[number][]> {
    const out: z.output<S>[number][] = [];
    let marker: string | undefined;
    for (;;) {
      const page = (await this.api.call(schema, 'GET', path, {
        query: { ...query, format: 'json', limit: PAGE, marker },
      })) as z.output<S>[number][];
      out.push(...page);
      const last = page.length > 0 ? nameOf(page[page.length - 1]) : undefined;
      if (page.length < PAGE || last === undefined || last === marker) return out;
      marker = last;
    }
  }

  async listContainers(filter: { prefix?: string } = {}): Promise<ContainerInfo[]> {
    const items = await this.pages(ContainerListing, '', { prefix: filter.prefix }, (c) => c.name);
    return items.map((c) => ({
      name: c.name,
      objectCount: c.count ?? 0,
      bytesUsed: c.bytes ?? 0,
      metadata: {},
    }));
  }

  async createContainer(
    name: string,
    options: { metadata?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<void> {
    await this.api.send('PUT', `/${seg(name)}`, {
      headers: { ...metaHeaders(options.metadata, 'x-container-meta-'), ...(options.headers ?? {}) },
      rawBody: '',
    });
  }

  async headContainer(name: string): Promise<ContainerInfo> {
    const res = await this.api.send('HEAD', `/${seg(name)}`);
    return {
      name,
      objectCount: num(res.headers['x-container-object-count']),
      bytesUsed: num(res.headers['x-container-bytes-used']),
      metadata: metaOf(res.headers, 'x-container-meta-'),
    };
  }

  async deleteContainer(name: string): Promise<void> {
    await this.api.send('DELETE', `/${seg(name)}`);
  }

  async listObjects(container: string, filter: { prefix?: string } = {}): Promise<ObjectInfo[]> {
    const items = await this.pages(
      ObjectListing,
      `/${seg(container)}`,
      { prefix: filter.prefix },
      (o) => o.name ?? o.subdir,
    );
    return items
      .filter((o): o is typeof o & { name: string } => o.name !== undefined)
      .map((o) => ({
        name: o.name,
        sizeBytes: o.bytes ?? 0,
        metadata: {},
        ...(o.hash ? { etag: o.hash } : {}),
        ...(o.content_type ? { contentType: o.content_type } : {}),
        ...(o.last_modified ? { lastModified: o.last_modified } : {}),
      }));
  }

  async putObject(
    container: string,
    name: string,
    data: Buffer | string,
    options: PutObjectOptions = {},
  ): Promise<{ etag: string }> {
    const body = Buffer.isBuffer(data) ? data : Buffer.from(data);
    const md5 = createHash('md5').update(body).digest('hex');
    const headers: Record<string, string> = {
      'content-type': options.contentType ?? 'application/octet-stream',
      etag: md5,
      ...metaHeaders(options.metadata, 'x-object-meta-'),
      ...(options.deleteAfterSeconds === undefined
        ? {}
        : { 'x-delete-after': String(options.deleteAfterSeconds) }),
      ...(options.headers ?? {}),
    };
    const res = await this.api.send('PUT', objectPath(container, name), { rawBody: body, headers });
    return { etag: (res.headers.etag ?? md5).replace(/"/g, '') };
  }

  async getObject(container: string, name: string): Promise<ObjectData> {
    const res = await this.api.send('GET', objectPath(container, name), {
      responseType: 'buffer',
      headers: { accept: '*/*' },
    });
    const data = res.body as Buffer;
    return { ...this.info(name, res.headers, data.length), data };
  }

  async headObject(container: string, name: string): Promise<ObjectInfo> {
    const res = await this.api.send('HEAD', objectPath(container, name), { headers: { accept: '*/*' } });
    return this.info(name, res.headers, num(res.headers['content-length']));
  }

  async deleteObject(container: string, name: string): Promise<void> {
    await this.api.send('DELETE', objectPath(container, name));
  }

  private info(name: string, headers: Record<string, string>, size: number): ObjectInfo {
    return {
      name,
      sizeBytes: size,
      metadata: metaOf(headers, 'x-object-meta-'),
      ...(headers.etag ? { etag: headers.etag.replace(/"/g, '') } : {}),
      ...(headers['content-type'] ? { contentType: headers['content-type'] } : {}),
      ...(headers['last-modified'] ? { lastModified: headers['last-modified'] } : {}),
    };
  }
}
