import { z } from 'zod';
import type { Session } from './session.ts';
import { compact, one, seg, ServiceApi, wire } from './service-api.ts';

/** Cinder (block-storage v3): volumes. */

export interface VolumeAttachment {
  serverId: string;
  device?: string;
  attachmentId?: string;
}

export interface Volume {
  id: string;
  name: string;
  /** creating, available, in-use, error, deleting, error_deleting, … */
  status: string;
  sizeGb: number;
  availabilityZone?: string;
  volumeType?: string;
  bootable: boolean;
  attachments: VolumeAttachment[];
  metadata: Record<string, string>;
  description?: string;
  /** Image the volume was created from (`volume_image_metadata.image_id`). */
  imageId?: string;
  createdAt?: string;
}

export interface CreateVolumeInput {
  name: string;
  sizeGb: number;
  volumeType?: string;
  availabilityZone?: string;
  /** Create from this image (bootable volume). */
  imageId?: string;
  description?: string;
  metadata?: Record<string, string>;
}

/** The Cinder calls provisioning needs. */
export interface VolumeClient {
  createVolume(input: CreateVolumeInput): Promise<Volume>;
  getVolume(id: string): Promise<Volume>;
  listVolumes(filter?: {
    name?: string;
    status?: string;
    metadata?: Record<string, string>;
  }): Promise<Volume[]>;
  /** Delete; `cascade` also deletes the volume's snapshots. */
  deleteVolume(id: string, options?: { cascade?: boolean }): Promise<void>;
}

const VolumeWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    status: z.string(),
    size: z.number(),
    availability_zone: wire.optStr,
    volume_type: wire.optStr,
    // Cinder answers the string "true"/"false".
    bootable: z.union([z.string(), z.boolean()]).nullish(),
    attachments: z
      .array(z.looseObject({ server_id: z.string(), device: wire.optStr, attachment_id: wire.optStr }))
      .nullish(),
    metadata: z.record(z.string(), z.string()).nullish(),
    description: wire.optStr,
    volume_image_metadata: z.record(z.string(), z.unknown()).nullish(),
    created_at: wire.optStr,
  })
  .transform((v): Volume => ({
    id: v.id,
    name: v.name ?? '',
    status: v.status,
    sizeGb: v.size,
    bootable: v.bootable === true || v.bootable === 'true',
    attachments: (v.attachments ?? []).map(
      (a) =>
        compact({
          serverId: a.server_id,
          device: a.device,
          attachmentId: a.attachment_id,
        }) as VolumeAttachment,
    ),
    metadata: v.metadata ?? {},
    ...compact({
      availabilityZone: v.availability_zone,
      volumeType: v.volume_type,
      description: v.description,
      imageId:
        typeof v.volume_image_metadata?.image_id === 'string' ? v.volume_image_metadata.image_id : undefined,
      createdAt: v.created_at,
    }),
  }));

/** Cinder over a session. */
export class CinderVolumeClient implements VolumeClient {
  private readonly api: ServiceApi;

  constructor(session: Session) {
    this.api = new ServiceApi(session, {
      serviceType: 'block-storage',
      // Catalogs list Cinder as …/v3/{project_id}; a bare service URL gets /v3.
      root: (endpoint) => (/\/v3(\/|$)/.test(new URL(endpoint).pathname) ? '' : '/v3'),
    });
  }

  createVolume(input: CreateVolumeInput): Promise<Volume> {
    const body = {
      volume: compact({
        name: input.name,
        size: input.sizeGb,
        volume_type: input.volumeType,
        availability_zone: input.availabilityZone,
        imageRef: input.imageId,
        description: input.description,
        metadata: input.metadata,
      }),
    };
    return this.api.call(one('volume', VolumeWire), 'POST', '/volumes', { body });
  }

  getVolume(id: string): Promise<Volume> {
    return this.api.call(one('volume', VolumeWire), 'GET', `/volumes/${seg(id)}`);
  }

  listVolumes(
    filter: { name?: string; status?: string; metadata?: Record<string, string> } = {},
  ): Promise<Volume[]> {
    return this.api.list(VolumeWire, '/volumes/detail', 'volumes', 'links', {
      name: filter.name,
      status: filter.status,
      metadata: filter.metadata ? JSON.stringify(filter.metadata) : undefined,
    });
  }

  async deleteVolume(id: string, options: { cascade?: boolean } = {}): Promise<void> {
    await this.api.send('DELETE', `/volumes/${seg(id)}`, {
      query: { cascade: options.cascade ? 'true' : undefined },
    });
  }
}
