import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCloudConfig, Session } from '../../src/cloud/index.ts';
import { testConfig } from '../../src/cli/load-config.ts';
import { ManualClock } from '../../src/domain/index.ts';
import { startMagnetar } from '../../src/main.ts';
import { provisioningSuite, type InjectedFailure } from './provisioning-suite.ts';

/**
 * The provisioning suite against Magnetar's embedded cloud, reached exactly as a real cloud:
 * the clouds.yaml Magnetar writes, password auth at its identity, endpoints from the catalog.
 * The cloud's asynchronous steps take 2 s of virtual time each.
 */
provisioningSuite(
  'provisioning calls against the embedded cloud (clouds.yaml, Keystone auth, catalog)',
  async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'magnetar-cloud-'));
    const clock = new ManualClock();
    const m = await startMagnetar({
      config: testConfig({ dataDir, cloud: { mode: 'embedded', simulatedLatencyMs: 2000 } }),
      clock,
      controllers: false,
      logger: false,
    });
    // Isolated from the developer's own OS_* variables and clouds.yaml/secure.yaml.
    const load = (cloud: string) =>
      loadCloudConfig({
        cloud,
        file: join(dataDir, 'clouds.yaml'),
        env: {},
        cwd: dataDir,
        home: dataDir,
        systemDir: dataDir,
      });
    const demo = new Session(load('magnetar-demo'), { random: () => 0 });
    const admin = new Session(load('magnetar-admin'));
    const faults = async (method: string, body?: unknown) => {
      const res = await fetch(`${m.url}/cloud/_faults`, {
        method,
        headers: { 'x-auth-token': await admin.token(), 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (res.status >= 300) throw new Error(`fault API ${method}: ${res.status} ${await res.text()}`);
    };
    return {
      session: demo,
      externalNetwork: 'public',
      availabilityZone: 'AZ-2',
      flavor: 'm1.small',
      osDistro: 'ubuntu',
      volumeSizeOverQuotaGb: 5000,
      settle: (ms) => clock.advance(ms),
      injectFault: (operation: string, failure: InjectedFailure) =>
        faults('POST', { kind: 'fail', operation, count: 1, failure }),
      clearFaults: () => faults('DELETE'),
      async close() {
        demo.close();
        admin.close();
        await m.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
);
