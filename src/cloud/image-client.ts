import { z } from 'zod';
import { CloudError, isNotFound } from './cloud-error.ts';
import type { Session } from './session.ts';
import { compact, seg, ServiceApi, single, versionRoot } from './service-api.ts';

/** Glance (image v2): images with their properties, and create + upload (for tests and demos). */

export interface Image {
  id: string;
  name: string;
  /** queued, saving, active, killed, deleted, deactivated, importing. */
  status: string;
  visibility?: string;
  /** Glance property `os_distro` (Magnum requires it). */
  osDistro?: string;
  /** Glance property `os_admin_user`. */
  osAdminUser?: string;
  minDiskGb: number;
  minRamMb: number;
  sizeBytes?: number;
  diskFormat?: string;
  containerFormat?: string;
  tags: string[];
  /** Every non-core property, as strings. */
  properties: Record<string, string>;
  createdAt?: string;
  updatedAt?: string;
}

export interface CreateImageInput {
  name: string;
  /** @default qcow2 */
  diskFormat?: string;
  /** @default bare */
  containerFormat?: string;
  /** public, private, shared, community. */
  visibility?: string;
  minDiskGb?: number;
  minRamMb?: number;
  tags?: string[];
  /** Extra properties such as `os_distro`, `os_admin_user`. */
  properties?: Record<string, string>;
}

export interface ImageFilter {
  name?: string;
  status?: string;
  visibility?: string;
  tags?: string[];
  /** Property filters, e.g. `{os_distro: 'ubuntu'}`. */
  properties?: Record<string, string>;
}

/** The Glance calls provisioning needs. */
export interface ImageClient {
  listImages(filter?: ImageFilter): Promise<Image[]>;
  getImage(id: string): Promise<Image>;
  /** An image by id or exact name. */
  findImage(nameOrId: string): Promise<Image | 'ambiguous' | undefined>;
  createImage(input: CreateImageInput): Promise<Image>;
  /** Upload the image data (`PUT /v2/images/{id}/file`). */
  uploadImageData(id: string, data: Buffer): Promise<void>;
  deleteImage(id: string): Promise<void>;
}

const CORE = new Set([
  'id',
  'name',
  'status',
  'visibility',
  'protected',
  'checksum',
  'os_hash_algo',
  'os_hash_value',
  'owner',
  'size',
  'virtual_size',
  'min_disk',
  'min_ram',
  'disk_format',
  'container_format',
  'created_at',
  'updated_at',
  'tags',
  'self',
  'file',
  'schema',
  'direct_url',
  'locations',
  'os_hidden',
  'stores',
]);

const ImageWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    status: z.string(),
    visibility: z.string().nullish(),
    min_disk: z.number().nullish(),
    min_ram: z.number().nullish(),
    size: z.number().nullish(),
    disk_format: z.string().nullish(),
    container_format: z.string().nullish(),
    tags: z.array(z.string()).nullish(),
    created_at: z.string().nullish(),
    updated_at: z.string().nullish(),
  })
  .transform((i): Image => {
    const properties: Record<string, string> = {};
    for (const [k, v] of Object.entries(i)) {
      if (CORE.has(k) || v === null || v === undefined) continue;
      properties[k] = typeof v === 'string' ? v : JSON.stringify(v);
    }
    return {
      id: i.id,
      name: i.name ?? '',
      status: i.status,
      minDiskGb: i.min_disk ?? 0,
      minRamMb: i.min_ram ?? 0,
      tags: i.tags ?? [],
      properties,
      ...compact({
        visibility: i.visibility ?? undefined,
        osDistro: properties.os_distro,
        osAdminUser: properties.os_admin_user,
        sizeBytes: i.size ?? undefined,
        diskFormat: i.disk_format ?? undefined,
        containerFormat: i.container_format ?? undefined,
        createdAt: i.created_at ?? undefined,
        updatedAt: i.updated_at ?? undefined,
      }),
    };
  });

/** Glance over a session. */
export class GlanceImageClient implements ImageClient {
  private readonly api: ServiceApi;

  constructor(session: Session) {
    this.api = new ServiceApi(session, {
      serviceType: 'image',
      root: (endpoint) => versionRoot(endpoint, ['v2']),
    });
  }

  listImages(filter: ImageFilter = {}): Promise<Image[]> {
    return this.api.list(ImageWire, '/images', 'images', 'next', {
      ...(filter.properties ?? {}),
      name: filter.name,
      status: filter.status,
      visibility: filter.visibility,
      tag: filter.tags && filter.tags.length > 0 ? filter.tags : undefined,
    });
  }

  getImage(id: string): Promise<Image> {
    return this.api.call(ImageWire, 'GET', `/images/${seg(id)}`);
  }

  async findImage(nameOrId: string): Promise<Image | 'ambiguous' | undefined> {
    const byName = await this.listImages({ name: nameOrId });
    if (byName.length > 0) return single(byName, nameOrId, (i) => i.name);
    try {
      return await this.getImage(nameOrId);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      // Glance answers 400 for a malformed id: nothing by that id either.
      if (err instanceof CloudError && err.kind === 'bad-request') return undefined;
      throw err;
    }
  }

  createImage(input: CreateImageInput): Promise<Image> {
    const body = {
      ...(input.properties ?? {}),
      ...compact({
        name: input.name,
        disk_format: input.diskFormat ?? 'qcow2',
        container_format: input.containerFormat ?? 'bare',
        visibility: input.visibility,
        min_disk: input.minDiskGb,
        min_ram: input.minRamMb,
        tags: input.tags,
      }),
    };
    return this.api.call(ImageWire, 'POST', '/images', { body });
  }

  async uploadImageData(id: string, data: Buffer): Promise<void> {
    await this.api.send('PUT', `/images/${seg(id)}/file`, {
      rawBody: data,
      headers: { 'content-type': 'application/octet-stream' },
    });
  }

  async deleteImage(id: string): Promise<void> {
    await this.api.send('DELETE', `/images/${seg(id)}`);
  }
}
