import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  CloudError,
  deleteIgnoringNotFound,
  isNotFound,
  loadCloudConfig,
  Session,
  type CloudConfig,
} from '../../src/cloud/index.ts';

/**
 * Access to a real OpenStack for the conformance tests. The switch is the environment
 * variable `MAGNETAR_REAL_OPENSTACK`: the path of a `clouds.yaml` (entry from
 * `MAGNETAR_REAL_OPENSTACK_CLOUD`, else its only/first entry) or of an openrc file
 * (`export OS_…=…` lines). The credentials must be an admin's: the tests create their own
 * tenant projects and users, and delete them again.
 */
export const REAL_OPENSTACK_ENV = 'MAGNETAR_REAL_OPENSTACK';

/** Why the real-cloud tests skip, or undefined when they run. */
export function realSkipReason(): string | undefined {
  const path = process.env[REAL_OPENSTACK_ENV];
  if (!path) return `${REAL_OPENSTACK_ENV} is not set (path of an admin clouds.yaml or openrc)`;
  if (!existsSync(path)) return `${REAL_OPENSTACK_ENV}=${path} does not exist`;
  return undefined;
}

/** The admin cloud configuration named by {@link REAL_OPENSTACK_ENV}. */
export function realAdminConfig(): CloudConfig {
  const path = process.env[REAL_OPENSTACK_ENV];
  if (!path) throw new Error(`${REAL_OPENSTACK_ENV} is not set`);
  const isolated = mkdtempSync(join(tmpdir(), 'magnetar-real-'));
  try {
    const text = readFileSync(path, 'utf8');
    if (/\.ya?ml$/.test(path)) {
      const doc = parseYaml(text) as { clouds?: Record<string, unknown> } | null;
      const names = Object.keys(doc?.clouds ?? {});
      const cloud = process.env.MAGNETAR_REAL_OPENSTACK_CLOUD ?? names[0];
      if (!cloud) throw new Error(`${path} defines no cloud`);
      return loadCloudConfig({
        file: path,
        cloud,
        env: {},
        cwd: isolated,
        home: isolated,
        systemDir: isolated,
      });
    }
    const env: Record<string, string> = {};
    for (const line of text.split('\n')) {
      const m = /^\s*(?:export\s+)?(OS_[A-Z0-9_]+)=(.*)$/.exec(line);
      if (m) env[m[1]!] = m[2]!.trim().replace(/^(['"])(.*)\1$/, '$2');
    }
    return loadCloudConfig({ env, cwd: isolated, home: isolated, systemDir: isolated });
  } finally {
    rmSync(isolated, { recursive: true, force: true });
  }
}

/** Session options for the real services: they drop reused connections now and then. */
export const REAL_SESSION_OPTIONS = { maxRetries: 4, retryBaseMs: 300, timeoutMs: 60_000 } as const;

/** Real time passes (the real services are not on the test's clock). */
export const realSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Named {
  id: string;
  name: string;
}

/** A tenant made for one test run: a project, a member user in it, a session as that user. */
export interface RealTenant {
  projectId: string;
  projectName: string;
  userId: string;
  username: string;
  password: string;
  /** Keystone URL (the admin's auth_url). */
  authUrl: string;
  session: Session;
}

/** Shared objects the tests reuse across runs (kept, like a provider's public images and flavors). */
export interface SharedFixtures {
  externalNetworkId: string;
  externalNetworkName: string;
  imageId: string;
  imageName: string;
  flavorName: string;
  /** Compute availability zones with at least one host, sorted. */
  zones: string[];
}

export const SHARED = {
  image: 'magnetar-conformance-ubuntu',
  flavor: 'magnetar.conformance',
  externalNetwork: 'magnetar-conformance-ext',
  osDistro: 'ubuntu',
} as const;

/** Admin operations on the real cloud that the tests need around the code under test. */
export class RealCloudAdmin {
  readonly admin: Session;

  constructor(readonly config: CloudConfig = realAdminConfig()) {
    this.admin = new Session(config, REAL_SESSION_OPTIONS);
  }

  get authUrl(): string {
    return this.config.auth.auth_url ?? '';
  }

  close(): void {
    this.admin.close();
  }

  async get<T>(service: string, path: string, query?: Record<string, string>): Promise<T> {
    return (await this.admin.request<T>(service, 'GET', path, query ? { query } : {})).body;
  }

  private async roleId(name: string): Promise<string> {
    const { roles } = await this.get<{ roles: Named[] }>('identity', '/roles', { name });
    if (roles[0]) return roles[0].id;
    const made = await this.admin.request<{ role: Named }>('identity', 'POST', '/roles', {
      body: { role: { name } },
    });
    return made.body.role.id;
  }

  /** Grant `role` to a user on a project (idempotent). */
  async grant(userId: string, projectId: string, role: string): Promise<void> {
    const roleId = await this.roleId(role);
    await this.admin.request('identity', 'PUT', `/projects/${projectId}/users/${userId}/roles/${roleId}`, {
      expect: [204],
    });
  }

  /** A fresh project with a member user (roles `member`, `load-balancer_member`). */
  async createTenant(
    prefix: string,
    roles: string[] = ['member', 'load-balancer_member'],
    userExtra: Record<string, unknown> = {},
  ): Promise<RealTenant> {
    const suffix = randomBytes(3).toString('hex');
    const projectName = `${prefix}-${suffix}`;
    const { project } = (
      await this.admin.request<{ project: Named }>('identity', 'POST', '/projects', {
        body: {
          project: { name: projectName, domain_id: 'default', description: 'Magnetar conformance test' },
        },
        retry: true,
      })
    ).body;
    const password = randomBytes(12).toString('hex');
    const { user } = (
      await this.admin.request<{ user: Named }>('identity', 'POST', '/users', {
        body: {
          user: {
            name: projectName,
            password,
            domain_id: 'default',
            default_project_id: project.id,
            ...userExtra,
          },
        },
      })
    ).body;
    for (const r of roles) await this.grant(user.id, project.id, r);
    const session = new Session(
      {
        authType: 'password',
        auth: {
          auth_url: this.authUrl,
          username: projectName,
          password,
          user_domain_id: 'default',
          project_id: project.id,
        },
        ...(this.config.regionName ? { regionName: this.config.regionName } : {}),
        interface: this.config.interface ?? 'public',
      },
      REAL_SESSION_OPTIONS,
    );
    return {
      projectId: project.id,
      projectName,
      userId: user.id,
      username: projectName,
      password,
      authUrl: this.authUrl,
      session,
    };
  }

  /**
   * A service user for Magnetar, as an operator would make it (docs/real-openstack.md): `admin`
   * in the `service` project (catalog registration, reading users), and `member` +
   * `load-balancer_member` inherited on the Default domain (acting in every tenant project).
   */
  async createServiceUser(prefix: string): Promise<{ userId: string; username: string; password: string }> {
    const username = `${prefix}-${randomBytes(3).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    const { projects } = await this.get<{ projects: Named[] }>('identity', '/projects', { name: 'service' });
    const service = projects[0];
    if (!service) throw new Error('the cloud has no "service" project');
    const { user } = (
      await this.admin.request<{ user: Named }>('identity', 'POST', '/users', {
        body: { user: { name: username, password, domain_id: 'default', default_project_id: service.id } },
      })
    ).body;
    await this.grant(user.id, service.id, 'admin');
    for (const role of ['member', 'load-balancer_member']) {
      const roleId = await this.roleId(role);
      await this.admin.request(
        'identity',
        'PUT',
        `/OS-INHERIT/domains/default/users/${user.id}/roles/${roleId}/inherited_to_projects`,
        { expect: [204] },
      );
    }
    return { userId: user.id, username, password };
  }

  async deleteUser(userId: string): Promise<void> {
    await deleteIgnoringNotFound(() => this.admin.request('identity', 'DELETE', `/users/${userId}`));
  }

  /** Remember the catalog entries of a service type; the returned function puts them back. */
  async snapshotCatalog(type: string): Promise<() => Promise<void>> {
    type Ep = { id: string; url: string; interface: string; region_id: string | null };
    const services = (await this.get<{ services: { id: string }[] }>('identity', '/services', { type }))
      .services;
    const before = new Map<string, Ep[]>();
    for (const svc of services)
      before.set(
        svc.id,
        (await this.get<{ endpoints: Ep[] }>('identity', '/endpoints', { service_id: svc.id })).endpoints,
      );
    return async () => {
      const now = (await this.get<{ services: { id: string }[] }>('identity', '/services', { type }))
        .services;
      for (const svc of now) {
        const old = before.get(svc.id);
        if (!old) {
          await deleteIgnoringNotFound(() => this.admin.request('identity', 'DELETE', `/services/${svc.id}`));
          continue;
        }
        const eps = (await this.get<{ endpoints: Ep[] }>('identity', '/endpoints', { service_id: svc.id }))
          .endpoints;
        for (const ep of eps) {
          const was = old.find((o) => o.id === ep.id);
          if (!was)
            await deleteIgnoringNotFound(() =>
              this.admin.request('identity', 'DELETE', `/endpoints/${ep.id}`),
            );
          else if (was.url !== ep.url)
            await this.admin.request('identity', 'PATCH', `/endpoints/${ep.id}`, {
              body: { endpoint: { url: was.url } },
            });
        }
      }
    };
  }

  /** Set Nova/Neutron/Cinder quotas of a project (admin). */
  async setQuotas(
    projectId: string,
    q: {
      compute?: Record<string, number>;
      network?: Record<string, number>;
      volume?: Record<string, number>;
    },
  ): Promise<void> {
    if (q.compute)
      await this.admin.request('compute', 'PUT', `/os-quota-sets/${projectId}`, {
        body: { quota_set: q.compute },
      });
    if (q.network)
      await this.admin.request('network', 'PUT', `/v2.0/quotas/${projectId}`, { body: { quota: q.network } });
    if (q.volume)
      await this.admin.request('volumev3', 'PUT', `/os-quota-sets/${projectId}`, {
        body: { quota_set: q.volume },
      });
  }

  /** Make (once) and return the public image, flavor and external network the tests use. */
  async ensureShared(): Promise<SharedFixtures> {
    // External network: any the cloud has, else one of our own (flat on physnet "public").
    const nets = (
      await this.get<{ networks: (Named & { 'router:external': boolean })[] }>('network', '/v2.0/networks', {
        'router:external': 'true',
      })
    ).networks;
    let ext = nets.find((n) => n.name === SHARED.externalNetwork) ?? nets[0];
    if (!ext) {
      ext = (
        await this.admin.request<{ network: Named & { 'router:external': boolean } }>(
          'network',
          'POST',
          '/v2.0/networks',
          {
            body: {
              network: {
                name: SHARED.externalNetwork,
                'router:external': true,
                'provider:network_type': 'flat',
                'provider:physical_network': 'public',
              },
            },
          },
        )
      ).body.network;
      await this.admin.request('network', 'POST', '/v2.0/subnets', {
        body: {
          subnet: {
            network_id: ext.id,
            name: `${SHARED.externalNetwork}-subnet`,
            ip_version: 4,
            cidr: '203.0.113.0/24',
            enable_dhcp: false,
          },
        },
      });
    }

    const images = (
      await this.get<{ images: (Named & { status: string })[] }>('image', '/v2/images', {
        name: SHARED.image,
      })
    ).images;
    let image = images.find((i) => i.status === 'active');
    if (!image) {
      for (const stale of images)
        await deleteIgnoringNotFound(() => this.admin.request('image', 'DELETE', `/v2/images/${stale.id}`));
      image = (
        await this.admin.request<Named & { status: string }>('image', 'POST', '/v2/images', {
          body: {
            name: SHARED.image,
            disk_format: 'raw',
            container_format: 'bare',
            visibility: 'public',
            os_distro: SHARED.osDistro,
            os_admin_user: 'ubuntu',
          },
        })
      ).body;
      await this.admin.request('image', 'PUT', `/v2/images/${image.id}/file`, {
        rawBody: Buffer.alloc(1024 * 1024),
        expect: [204],
      });
    }

    const flavors = (await this.get<{ flavors: Named[] }>('compute', '/flavors')).flavors;
    if (!flavors.some((f) => f.name === SHARED.flavor)) {
      await this.admin.request('compute', 'POST', '/flavors', {
        body: { flavor: { name: SHARED.flavor, vcpus: 1, ram: 512, disk: 1 } },
      });
    }
    return {
      externalNetworkId: ext.id,
      externalNetworkName: ext.name,
      imageId: image.id,
      imageName: SHARED.image,
      flavorName: SHARED.flavor,
      zones: await this.computeZones(),
    };
  }

  /**
   * Spread the compute hosts that are in no availability zone over `count` zones
   * (`magnetar-az-1`…, one host aggregate each), so the zones with a host number at least
   * `count` when the cloud has the hosts, then wait until every enabled host is up. Kept across
   * runs, like the shared image.
   *
   * Every enabled host counts, up or not yet: a host left out stays in Nova's default zone, and
   * a server asked for the default zone may land on any host, also one in another zone.
   */
  async ensureZones(count: number): Promise<string[]> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const services = (
        await this.get<{ services: { host: string; state: string; status: string }[] }>(
          'compute',
          '/os-services',
          { binary: 'nova-compute' },
        )
      ).services.filter((x) => x.status === 'enabled');
      const aggregates = (
        await this.get<{
          aggregates: { id: number; name: string; availability_zone: string | null; hosts: string[] }[];
        }>('compute', '/os-aggregates')
      ).aggregates;
      const zonedAggregates = aggregates.filter((a) => a.availability_zone && a.hosts.length > 0);
      const zoned = new Set(zonedAggregates.flatMap((a) => a.hosts));
      const taken = new Set(zonedAggregates.map((a) => a.availability_zone));
      const free = services.map((x) => x.host).filter((h) => !zoned.has(h));
      for (let i = 1; taken.size < count && free.length > 0; i++) {
        const zone = `magnetar-az-${i}`;
        if (taken.has(zone)) continue;
        let agg = aggregates.find((a) => a.name === zone);
        if (!agg) {
          agg = (
            await this.admin.request<{
              aggregate: { id: number; name: string; availability_zone: string; hosts: string[] };
            }>('compute', 'POST', '/os-aggregates', {
              body: { aggregate: { name: zone, availability_zone: zone } },
            })
          ).body.aggregate;
        }
        await this.admin.request('compute', 'POST', `/os-aggregates/${agg.id}/action`, {
          body: { add_host: { host: free.shift()! } },
        });
        taken.add(zone);
      }
      const zones = await this.computeZones();
      if (services.every((x) => x.state === 'up') || Date.now() > deadline) return zones;
      await new Promise((done) => setTimeout(done, 2000));
    }
  }

  /** Compute availability zones that have an enabled, up host. */
  async computeZones(): Promise<string[]> {
    const { availabilityZoneInfo } = await this.get<{
      availabilityZoneInfo: {
        zoneName: string;
        zoneState: { available: boolean };
        hosts: Record<string, unknown> | null;
      }[];
    }>('compute', '/os-availability-zone/detail');
    return availabilityZoneInfo
      .filter(
        (z) =>
          z.zoneState.available && z.hosts && Object.keys(z.hosts).length > 0 && z.zoneName !== 'internal',
      )
      .map((z) => z.zoneName)
      .sort();
  }

  /** Everything a project holds in the real services, by kind (ids), read as admin. */
  async inventory(projectId: string): Promise<Record<string, string[]>> {
    const ids = (xs: { id: string }[]) => xs.map((x) => x.id).sort();
    const p = { project_id: projectId };
    const servers = await this.get<{ servers: { id: string }[] }>('compute', '/servers', {
      all_tenants: '1',
      project_id: projectId,
    });
    const lbs = await this.get<{ loadbalancers: { id: string }[] }>(
      'load-balancer',
      '/v2/lbaas/loadbalancers',
      p,
    );
    const fips = await this.get<{ floatingips: { id: string }[] }>('network', '/v2.0/floatingips', p);
    const routers = await this.get<{ routers: { id: string }[] }>('network', '/v2.0/routers', p);
    const nets = await this.get<{ networks: { id: string }[] }>('network', '/v2.0/networks', p);
    const ports = await this.get<{ ports: { id: string }[] }>('network', '/v2.0/ports', p);
    const sgs = await this.get<{ security_groups: { id: string; name: string }[] }>(
      'network',
      '/v2.0/security-groups',
      p,
    );
    const vols = await this.get<{ volumes: { id: string }[] }>('volumev3', '/volumes', {
      all_tenants: '1',
      project_id: projectId,
    });
    return {
      servers: ids(servers.servers),
      loadbalancers: ids(lbs.loadbalancers),
      floatingips: ids(fips.floatingips),
      routers: ids(routers.routers),
      networks: ids(nets.networks),
      ports: ids(ports.ports),
      // Neutron makes a "default" group for every project that asks: not the test's doing.
      security_groups: ids(sgs.security_groups.filter((g) => g.name !== 'default')),
      volumes: ids(vols.volumes),
    };
  }

  /**
   * Delete everything left in the tenant's project (best effort, in dependency order), then
   * the user and the project. Returns what had to be swept (empty when the test cleaned up).
   */
  async dropTenant(t: RealTenant): Promise<Record<string, string[]>> {
    const nothing: Record<string, string[]> = {};
    const left = await this.inventory(t.projectId).catch(() => nothing);
    const quiet = async (fn: () => Promise<unknown>) => {
      try {
        await deleteIgnoringNotFound(fn);
      } catch {
        // best effort
      }
    };
    const a = this.admin;
    for (const id of left.loadbalancers ?? [])
      await quiet(() =>
        a.request('load-balancer', 'DELETE', `/v2/lbaas/loadbalancers/${id}`, { query: { cascade: 'true' } }),
      );
    for (const id of left.servers ?? []) await quiet(() => a.request('compute', 'DELETE', `/servers/${id}`));
    for (const id of left.floatingips ?? [])
      await quiet(() => a.request('network', 'DELETE', `/v2.0/floatingips/${id}`));
    await this.waitGone(t.projectId, ['servers', 'loadbalancers'], 120_000).catch(() => undefined);
    for (const id of left.routers ?? []) {
      type RouterPorts = { ports: { id: string; device_owner: string }[] };
      const none: RouterPorts = { ports: [] };
      const ports = await this.get<RouterPorts>('network', '/v2.0/ports', { device_id: id }).catch(
        () => none,
      );
      for (const port of ports.ports.filter((x) => x.device_owner === 'network:router_interface'))
        await quiet(() =>
          a.request('network', 'PUT', `/v2.0/routers/${id}/remove_router_interface`, {
            body: { port_id: port.id },
          }),
        );
      await quiet(() => a.request('network', 'DELETE', `/v2.0/routers/${id}`));
    }
    const after = await this.inventory(t.projectId).catch(() => nothing);
    for (const id of after.ports ?? [])
      await quiet(() => a.request('network', 'DELETE', `/v2.0/ports/${id}`));
    for (const id of after.networks ?? [])
      await quiet(() => a.request('network', 'DELETE', `/v2.0/networks/${id}`));
    for (const id of after.security_groups ?? [])
      await quiet(() => a.request('network', 'DELETE', `/v2.0/security-groups/${id}`));
    for (const id of after.volumes ?? [])
      await quiet(() => a.request('volumev3', 'DELETE', `/volumes/${id}`, { query: { cascade: 'true' } }));
    // The default security group and keypairs (per user) go with the project and the user.
    const sgs = await this.get<{ security_groups: { id: string }[] }>('network', '/v2.0/security-groups', {
      project_id: t.projectId,
    }).catch(() => ({ security_groups: [] }));
    for (const g of sgs.security_groups)
      await quiet(() => a.request('network', 'DELETE', `/v2.0/security-groups/${g.id}`));
    try {
      const keys = await t.session.request<{ keypairs: { keypair: { name: string } }[] }>(
        'compute',
        'GET',
        '/os-keypairs',
      );
      for (const k of keys.body.keypairs)
        await quiet(() =>
          t.session.request('compute', 'DELETE', `/os-keypairs/${encodeURIComponent(k.keypair.name)}`),
        );
    } catch {
      // the user may already be gone
    }
    for (const kind of ['compute', 'network', 'volume'] as const) {
      const path = kind === 'network' ? `/v2.0/quotas/${t.projectId}` : `/os-quota-sets/${t.projectId}`;
      await quiet(() => a.request(kind === 'volume' ? 'volumev3' : kind, 'DELETE', path));
    }
    t.session.close();
    await quiet(() => a.request('identity', 'DELETE', `/users/${t.userId}`));
    await quiet(() => a.request('identity', 'DELETE', `/projects/${t.projectId}`));
    return Object.fromEntries(Object.entries(left).filter(([, v]) => v.length > 0));
  }

  /** Wait until the project holds none of `kinds`. */
  async waitGone(projectId: string, kinds: string[], timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const inv = await this.inventory(projectId);
      if (kinds.every((k) => (inv[k] ?? []).length === 0)) return;
      await realSleep(1000);
    }
  }
}

/** True when `err` is a CloudError of one of these kinds. */
export function isCloudErrorKind(err: unknown, ...kinds: string[]): boolean {
  return err instanceof CloudError && kinds.includes(err.kind);
}

export { isNotFound };
