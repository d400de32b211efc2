import type { QuotaSet } from './records.ts';
import type { Repos } from './repos.ts';

/** The quota areas, one per service that enforces quotas. */
export type QuotaArea = keyof QuotaSet;

/**
 * Default per-project limits, as a small public region sets them (-1 = unlimited). Nova's and
 * Neutron's resource names, Cinder's and Octavia's.
 */
export const DEFAULT_QUOTAS: QuotaSet = {
  compute: {
    instances: 20,
    cores: 40,
    ram: 81920,
    key_pairs: 100,
    metadata_items: 128,
    server_groups: 10,
    server_group_members: 10,
    injected_files: 5,
    injected_file_content_bytes: 10240,
    injected_file_path_bytes: 255,
  },
  network: {
    network: 100,
    subnet: 100,
    subnetpool: -1,
    port: 500,
    router: 10,
    floatingip: 50,
    security_group: 10,
    security_group_rule: 100,
    rbac_policy: 10,
  },
  volume: {
    volumes: 10,
    gigabytes: 1000,
    snapshots: 10,
    backups: 10,
    backup_gigabytes: 1000,
    per_volume_gigabytes: -1,
    groups: 10,
  },
  loadbalancer: {
    load_balancer: 10,
    listener: -1,
    pool: -1,
    member: -1,
    health_monitor: -1,
    l7policy: -1,
    l7rule: -1,
  },
};

const QUOTA_ROW = 'quotas';

/** Per-project quota limits: stored overrides over the defaults. */
export class Quotas {
  constructor(
    private readonly repos: Repos,
    private readonly defaults: QuotaSet = DEFAULT_QUOTAS,
  ) {}

  /** The defaults of one area. */
  defaultsOf(area: QuotaArea): Record<string, number> {
    return { ...this.defaults[area] };
  }

  /** The effective limits of a project in one area. */
  async limits(project: string, area: QuotaArea): Promise<Record<string, number>> {
    const row = await this.repos.quotaSets.get(project, QUOTA_ROW);
    return { ...this.defaults[area], ...(row?.rec[area] ?? {}) };
  }

  /** The effective limit of one resource. */
  async limit(project: string, area: QuotaArea, resource: string): Promise<number> {
    return (await this.limits(project, area))[resource] ?? -1;
  }

  /** True when a project has overrides in an area (Neutron's quota list shows only those). */
  async hasOverrides(project: string, area: QuotaArea): Promise<boolean> {
    const row = await this.repos.quotaSets.get(project, QUOTA_ROW);
    return Object.keys(row?.rec[area] ?? {}).length > 0;
  }

  /** Projects with overrides in an area. */
  async projectsWithOverrides(area: QuotaArea): Promise<string[]> {
    return (await this.repos.quotaSets.list())
      .filter((r) => Object.keys(r.rec[area]).length > 0)
      .map((r) => r.project);
  }

  /** Set limits of a project (only names the area knows are kept). */
  async set(
    project: string,
    area: QuotaArea,
    values: Record<string, number>,
  ): Promise<Record<string, number>> {
    const known = Object.fromEntries(Object.entries(values).filter(([k]) => k in this.defaults[area]));
    const row = await this.repos.quotaSets.get(project, QUOTA_ROW);
    if (!row) {
      const rec: QuotaSet = { compute: {}, network: {}, volume: {}, loadbalancer: {} };
      rec[area] = known;
      await this.repos.quotaSets.create(project, QUOTA_ROW, rec, { uid: null });
    } else {
      await this.repos.quotaSets.mutate(project, QUOTA_ROW, (r) => ({
        ...r.rec,
        [area]: { ...r.rec[area], ...known },
      }));
    }
    return this.limits(project, area);
  }

  /** Drop a project's overrides of an area (back to defaults). */
  async reset(project: string, area: QuotaArea): Promise<void> {
    const row = await this.repos.quotaSets.get(project, QUOTA_ROW);
    if (!row) return;
    await this.repos.quotaSets.mutate(project, QUOTA_ROW, (r) => ({ ...r.rec, [area]: {} }));
  }
}
