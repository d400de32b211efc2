import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { testConfig } from '../../src/cli/load-config.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';
import { CapiTypes, MagnumTypes } from '../../src/domain/index.ts';
import { RealCloudAdmin, realSleep, type RealTenant, type SharedFixtures } from './real-openstack.ts';

/**
 * Magnetar in front of real OpenStack services, as an operator would run it: identity mode
 * `keystone` (tokens validated by the real Keystone, Magnum API registered there as
 * `container-infra`), cloud mode `external` (the controllers act in tenants' projects as
 * Magnetar's own service user), workload emulation on (the fake hypervisor runs no guest).
 */
export interface RealMagnetar {
  m: Magnetar;
  admin: RealCloudAdmin;
  shared: SharedFixtures;
  /** Temporary directory for clouds.yaml files and kubeconfigs. */
  dir: string;
  /** A tenant whose user is a service account (may create clusters). */
  newTenant(prefix: string): Promise<RealTenant>;
  /** Run the real `openstack` CLI as the tenant's user (a clouds.yaml for the real Keystone). */
  openstack(tenant: RealTenant, args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Like {@link openstack}, insisting on success, with `-f json`. */
  json<T>(tenant: RealTenant, args: string[]): Promise<T>;
  /** Poll `openstack coe cluster show` until the status is not `*_IN_PROGRESS`. */
  settle(tenant: RealTenant, cluster: string, timeoutMs: number): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startRealMagnetar(): Promise<RealMagnetar> {
  const admin = new RealCloudAdmin();
  const cleanups: (() => Promise<void>)[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'magnetar-real-cluster-'));
  try {
    const shared = await admin.ensureShared();
    shared.zones = await admin.ensureZones(3);
    const restoreCatalog = await admin.snapshotCatalog('container-infra');
    cleanups.push(restoreCatalog);
    const svc = await admin.createServiceUser('magnetar-svc');
    cleanups.push(() => admin.deleteUser(svc.userId));
    const region = admin.config.regionName ?? 'RegionOne';
    const serviceClouds = join(dir, 'magnetar-service.yaml');
    writeFileSync(
      serviceClouds,
      toYaml({
        clouds: {
          magnetar: {
            auth: {
              auth_url: admin.authUrl,
              username: svc.username,
              password: svc.password,
              project_name: 'service',
              user_domain_name: 'Default',
              project_domain_name: 'Default',
            },
            region_name: region,
            interface: 'public',
          },
        },
      }),
    );
    const m = await startMagnetar({
      config: testConfig({
        dataDir: dir,
        region,
        identity: { mode: 'keystone', tokenTtlSeconds: 3600, registerCatalog: true },
        cloud: {
          mode: 'external',
          cloudsYaml: serviceClouds,
          cloudName: 'magnetar',
          emulateWorkload: true,
          simulatedLatencyMs: 0,
        },
        controllers: { workers: 4, resyncSeconds: 30, leaseTtlSeconds: 15 },
        // MAGNETAR_TEST_LOG=1 shows the server's log (debugging a run against a real cloud).
        logLevel: process.env.MAGNETAR_TEST_LOG === '1' ? 'info' : 'silent',
      }),
      logger: process.env.MAGNETAR_TEST_LOG === '1',
    });
    cleanups.push(() => m.close());

    const tenants: RealTenant[] = [];
    cleanups.push(async () => {
      for (const t of tenants) await admin.dropTenant(t);
    });
    const cloudsFile = (t: RealTenant) => {
      const file = join(dir, `${t.projectName}.yaml`);
      writeFileSync(
        file,
        toYaml({
          clouds: {
            tenant: {
              auth: {
                auth_url: t.authUrl,
                username: t.username,
                password: t.password,
                project_id: t.projectId,
                user_domain_name: 'Default',
              },
              region_name: region,
              interface: 'public',
              identity_api_version: 3,
            },
          },
        }),
      );
      return file;
    };
    const openstack: RealMagnetar['openstack'] = (t, args) => {
      const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OS_')));
      // `cluster config` reads SHELL and fails without one (a CI shell may not export it).
      const env = {
        ...clean,
        HOME: dir,
        OS_CLIENT_CONFIG_FILE: cloudsFile(t),
        OS_CLOUD: 'tenant',
        SHELL: '/bin/bash',
      };
      return new Promise((resolve) => {
        execFile('openstack', args, { env, timeout: 180_000 }, (err, stdout, stderr) => {
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
        });
      });
    };
    const json = async <T>(t: RealTenant, args: string[]): Promise<T> => {
      const r = await openstack(t, [...args, '-f', 'json']);
      assert.equal(r.code, 0, `openstack ${args.join(' ')} failed: ${r.stderr}`);
      // keystoneauth prints "Request to … failed; retrying" lines before the answer when a
      // connection drops (the real Keystone does that now and then).
      const start = r.stdout.search(/^[[{]/m);
      assert.ok(start >= 0, `openstack ${args.join(' ')}: no JSON in ${r.stdout}`);
      return JSON.parse(r.stdout.slice(start)) as T;
    };
    return {
      m,
      admin,
      shared,
      dir,
      async newTenant(prefix) {
        const t = await admin.createTenant(prefix, ['member', 'load-balancer_member'], {
          service_account: true,
        });
        tenants.push(t);
        return t;
      },
      openstack,
      json,
      async settle(t, cluster, timeoutMs) {
        const until = Date.now() + timeoutMs;
        let last: Record<string, unknown> = {};
        while (Date.now() < until) {
          last = await json<Record<string, unknown>>(t, ['coe', 'cluster', 'show', cluster]);
          if (process.env.MAGNETAR_TEST_LOG === '1') {
            console.log(`# ${cluster}: ${String(last.status)} ${String(last.status_reason)}`);
            for (const type of [
              MagnumTypes.Cluster,
              CapiTypes.Cluster,
              CapiTypes.OpenStackCluster,
              CapiTypes.Machine,
            ]) {
              for (const o of (await m.store.list(type, { namespace: t.projectId })).items)
                console.log(`#   ${type} ${o.metadata.name} ${JSON.stringify(o.status).slice(0, 600)}`);
            }
          }
          if (!String(last.status).endsWith('_IN_PROGRESS')) return last;
          await realSleep(3000);
        }
        assert.fail(
          `cluster ${cluster} still ${String(last.status)} after ${timeoutMs} ms: ${String(last.status_reason)}`,
        );
      },
      async close() {
        for (const c of cleanups.reverse()) await c().catch(() => undefined);
        admin.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    admin.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
