import { NotFoundError } from '../../domain/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import { CloudHttpError } from '../core/errors.ts';
import type { Caller } from '../core/http.ts';
import { newId } from '../core/ids.ts';
import type { Volume } from '../core/records.ts';
import type { Row } from '../core/repo.ts';

/** Cinder's default volume type. */
export const DEFAULT_VOLUME_TYPE = {
  id: '5f2d3c1e-6b7a-4c8d-9e0f-1a2b3c4d5e6f',
  name: '__DEFAULT__',
  description: 'Default Volume Type',
};

/** Arguments of {@link VolumeService.newVolume}. */
export interface NewVolume {
  size: number;
  name?: string | null;
  description?: string | null;
  volumeType?: string;
  availabilityZone: string;
  imageId?: string | null;
  imageMetadata?: Record<string, string>;
  metadata?: Record<string, string>;
  multiattach?: boolean;
  snapshotId?: string | null;
  sourceVolid?: string | null;
  userId: string;
  status?: string;
}

/** Cinder's internals, shared by its routes and by Nova (boot from volume, attachments). */
export class VolumeService {
  constructor(private readonly ctx: CloudContext) {}

  async get(caller: Caller, project: string, id: string): Promise<Row<Volume>> {
    const row = caller.isAdmin
      ? await this.ctx.repos.volumes.find(id)
      : await this.ctx.repos.volumes.get(project, id);
    if (!row) throw new NotFoundError(`Volume ${id} could not be found.`, { code: 'VolumeNotFound' });
    return row;
  }

  async usage(project: string): Promise<{ volumes: number; gigabytes: number }> {
    const rows = await this.ctx.repos.volumes.list({ project });
    return { volumes: rows.length, gigabytes: rows.reduce((n, r) => n + r.rec.size, 0) };
  }

  /** Cinder's quota check: VolumeLimitExceeded / VolumeSizeExceedsAvailableQuota (413). */
  async checkQuota(project: string, volumes: number, gigabytes: number): Promise<void> {
    const limits = await this.ctx.quotas.limits(project, 'volume');
    const perVolume = limits.per_volume_gigabytes ?? -1;
    if (perVolume >= 0 && gigabytes > perVolume) {
      throw quotaError(
        'VolumeSizeExceedsLimit',
        `Requested volume size ${gigabytes}G is larger than maximum allowed limit ${perVolume}G.`,
      );
    }
    const vLimit = limits.volumes ?? -1;
    const gLimit = limits.gigabytes ?? -1;
    if (vLimit < 0 && gLimit < 0) return;
    const used = await this.usage(project);
    if (gLimit >= 0 && used.gigabytes + gigabytes > gLimit) {
      throw quotaError(
        'VolumeSizeExceedsAvailableQuota',
        `Requested volume or snapshot exceeds allowed gigabytes quota. Requested ${gigabytes}G, quota is ${gLimit}G and ${used.gigabytes}G has been consumed.`,
      );
    }
    if (vLimit >= 0 && used.volumes + volumes > vLimit) {
      throw quotaError(
        'VolumeLimitExceeded',
        `Maximum number of volumes allowed (${vLimit}) exceeded for quota 'volumes'.`,
      );
    }
  }

  /** A new volume record (status `creating` unless given). */
  newVolume(v: NewVolume): Volume {
    const now = nowIso(this.ctx);
    return {
      id: newId(),
      name: v.name ?? null,
      description: v.description ?? null,
      size: v.size,
      volume_type: v.volumeType ?? DEFAULT_VOLUME_TYPE.name,
      availability_zone: v.availabilityZone,
      bootable: Boolean(v.imageId),
      image_id: v.imageId ?? null,
      image_metadata: v.imageMetadata ?? {},
      metadata: v.metadata ?? {},
      multiattach: v.multiattach ?? false,
      snapshot_id: v.snapshotId ?? null,
      source_volid: v.sourceVolid ?? null,
      user_id: v.userId,
      attachments: [],
      status: v.status ?? 'creating',
      created_at: now,
      updated_at: null,
      transition: null,
    };
  }

  /** The record after attaching to a server. */
  attached(vol: Volume, serverId: string, device: string): Volume {
    const now = nowIso(this.ctx);
    return {
      ...vol,
      status: 'in-use',
      attachments: [
        ...vol.attachments.filter((a) => a.server_id !== serverId),
        { id: newId(), server_id: serverId, device, attached_at: now },
      ],
      updated_at: now,
    };
  }

  /** The record after detaching from a server. */
  detached(vol: Volume, serverId: string): Volume {
    const attachments = vol.attachments.filter((a) => a.server_id !== serverId);
    return {
      ...vol,
      attachments,
      status: attachments.length > 0 ? 'in-use' : 'available',
      updated_at: nowIso(this.ctx),
    };
  }
}

/** A Cinder quota error: 413 with Cinder's class-name prefix and `retryAfter`. */
export function quotaError(name: string, message: string): CloudHttpError {
  return new CloudHttpError(413, `${name}: ${message}`, { code: name, details: { retryAfter: '0' } });
}
