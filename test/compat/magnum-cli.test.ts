import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { testConfig } from '../../src/cli/load-config.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';
import { MAGNUM_API_VERSION } from '../../src/domain/index.ts';

/**
 * Every `openstack coe` command of the provider's user guide, run by the real client
 * (python-openstackclient + magnumclient) against Magnetar, configured only by the clouds.yaml
 * Magnetar writes (entry `magnetar-demo-sa`; `magnetar-admin` for admin commands).
 *
 * The provisioning engine is not started, so clusters stay CREATE_IN_PROGRESS: the commands
 * that need a complete cluster (nodegroup create, resize of a new group, upgrade) are checked
 * for what Magnum answers now. The end-to-end run with the engine belongs to the e2e suite.
 *
 * Skips when the client is missing, unless MAGNETAR_REQUIRE_REAL_CLIENTS=1.
 */

const required = process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1';
const installed = spawnSync('openstack', ['--version'], { encoding: 'utf8' }).status === 0;
const skip = installed
  ? false
  : required
    ? false
    : 'the openstack CLI is not installed (MAGNETAR_REQUIRE_REAL_CLIENTS=1 makes this fail)';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let m: Magnetar;
let dataDir: string;
let clusterUuid = '';
let projectId = '';

/** Run `openstack` with only the given OS_* settings (none inherited from the caller's shell). */
function openstack(args: string[], cloud = 'magnetar-demo-sa'): Promise<Run> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OS_')));
  const env = {
    ...clean,
    HOME: dataDir,
    SHELL: '/bin/bash',
    OS_CLIENT_CONFIG_FILE: join(dataDir, 'clouds.yaml'),
    OS_CLOUD: cloud,
  };
  return new Promise((resolve) => {
    execFile('openstack', args, { env, timeout: 180_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Run, insist on success with a clean stderr, parse `-f json` output. */
async function json<T>(args: string[], cloud?: string): Promise<T> {
  const r = await openstack([...args, '-f', 'json'], cloud);
  assert.equal(r.code, 0, `openstack ${args.join(' ')} failed: ${r.stderr}`);
  assert.equal(r.stderr.trim(), '', `openstack ${args.join(' ')} wrote to stderr: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** A failing command: rc 1 and Magnum's "<title> (HTTP <code>) (Request-ID: req-…)" on stderr. */
function assertHttpError(r: Run, status: number, title: RegExp): void {
  assert.equal(r.code, 1, `expected rc 1, got ${r.code}: ${r.stdout} ${r.stderr}`);
  assert.match(
    r.stderr,
    new RegExp(`${title.source}[^\\n]* \\(HTTP ${status}\\) \\(Request-ID: req-[0-9a-f-]{36}\\)`),
  );
}

void describe('openstack coe against the Magnum v1 façade', { skip, timeout: 30 * 60_000 }, () => {
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'magnetar-magnum-cli-'));
    m = await startMagnetar({ config: testConfig({ dataDir }), controllers: false, logger: false });
  });
  after(async () => {
    await m?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  void test('the openstack CLI is installed', () => {
    assert.ok(installed, 'openstack is required when MAGNETAR_REQUIRE_REAL_CLIENTS=1');
  });

  void test('cluster template list shows the operator templates (uuid, name, tags)', async () => {
    const r = await openstack(['coe', 'cluster', 'template', 'list']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\| uuid +\| name +\| tags +\|/);
    for (const v of ['31', '32', '33'])
      assert.match(r.stdout, new RegExp(`\\| [0-9a-f-]{36} \\| k8s-v1\\.${v} +\\| kubernetes-1\\.${v} +\\|`));
  });

  void test('cluster template show prints the template with its Kubernetes version, network driver and image', async () => {
    const t = await json<Record<string, unknown>>(['coe', 'cluster', 'template', 'show', 'k8s-v1.32']);
    assert.equal(t.name, 'k8s-v1.32');
    assert.equal(t.coe, 'kubernetes');
    assert.equal(t.network_driver, 'calico');
    assert.equal(t.image_id, 'ubuntu-22.04-kube');
    assert.equal(t.master_lb_enabled, true);
    assert.equal((t.labels as Record<string, string>).kube_tag, 'v1.32.5');
    const table = await openstack(['coe', 'cluster', 'template', 'show', 'k8s-v1.32']);
    assert.match(table.stdout, /\| keypair_id +\| - +\|/); // None prints as '-'
  });

  void test('a keypair the service account does not have is refused before anything is created; openstack keypair create makes it', async () => {
    const args = ['coe', 'cluster', 'create', '--cluster-template', 'k8s-v1.32', '--master-count', '3'];
    const flavors = ['--master-flavor', 'm1.medium', '--node-count', '3', '--flavor', 'm1.medium'];
    const missing = await openstack([
      ...args,
      ...flavors,
      '--keypair',
      'my-keypair',
      'production-kubernetes',
    ]);
    assertHttpError(missing, 404, /Unable to find keypair my-keypair: keypairs belong to a user/);
    const list = await openstack(['coe', 'cluster', 'list', '-f', 'value']);
    assert.equal(list.stdout.trim(), '', 'nothing was created');
    // the guide's prerequisite, with the same real client
    const kp = await openstack([
      'keypair',
      'create',
      'my-keypair',
      '--private-key',
      join(dataDir, 'my-keypair.pem'),
    ]);
    assert.equal(kp.code, 0, kp.stderr);
  });

  void test('cluster create with the guide arguments is accepted and prints the uuid', async () => {
    const r = await openstack([
      'coe',
      'cluster',
      'create',
      '--cluster-template',
      'k8s-v1.32',
      '--master-count',
      '3',
      '--master-flavor',
      'm1.medium',
      '--node-count',
      '3',
      '--flavor',
      'm1.medium',
      '--keypair',
      'my-keypair',
      'production-kubernetes',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const m1 = /^Request to create cluster ([0-9a-f-]{36}) accepted$/m.exec(r.stdout);
    assert.ok(m1, r.stdout);
    clusterUuid = m1[1]!;
  });

  void test('cluster show prints the guide columns; the cluster is CREATE_IN_PROGRESS', async () => {
    const c = await json<Record<string, unknown>>(['coe', 'cluster', 'show', 'production-kubernetes']);
    assert.equal(c.uuid, clusterUuid);
    assert.equal(c.status, 'CREATE_IN_PROGRESS');
    assert.equal(c.node_count, 3);
    assert.equal(c.master_count, 3);
    assert.equal(c.keypair, 'my-keypair');
    assert.equal(c.master_lb_enabled, true);
    assert.equal(c.health_status, null);
    // The client asks for `latest` (1.14): as in Magnum from 1.13 on, `cluster_id` replaces `stack_id`,
    // so the client's stack_id column is empty.
    assert.equal(c.stack_id, '');
    projectId = String(c.project_id);
    const table = await openstack(['coe', 'cluster', 'show', clusterUuid]);
    assert.match(table.stdout, /\| status +\| CREATE_IN_PROGRESS +\|/);
    assert.match(table.stdout, /\| health_status +\| None +\|/);
  });

  void test('cluster list shows the cluster in its short form', async () => {
    const r = await openstack(['coe', 'cluster', 'list']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /\| uuid +\| name +\| keypair +\| node_count +\| master_count +\| status +\| health_status +\|/,
    );
    assert.match(
      r.stdout,
      new RegExp(
        `\\| ${clusterUuid} \\| production-kubernetes \\| my-keypair \\| +3 \\| +3 \\| CREATE_IN_PROGRESS \\| None +\\|`,
      ),
    );
    const paged = await json<{ uuid: string }[]>(['coe', 'cluster', 'list', '--limit', '1']);
    assert.deepEqual(
      paged.map((c) => c.uuid),
      [clusterUuid],
    );
  });

  void test('a personal account cannot create a cluster and is told to use a service account', async () => {
    const r = await openstack(
      [
        'coe',
        'cluster',
        'create',
        '--cluster-template',
        'k8s-v1.32',
        '--master-count',
        '1',
        '--master-flavor',
        'm1.medium',
        '--node-count',
        '1',
        '--flavor',
        'm1.medium',
        '--keypair',
        'k',
        'personal',
      ],
      'magnetar-demo',
    );
    assertHttpError(
      r,
      403,
      /Clusters must be created by a service account, not by the personal account demo: authenticate as a service account of project demo and retry/,
    );
  });

  void test('a create without the required options is accepted and ends CREATE_FAILED naming them', async () => {
    const r = await openstack(['coe', 'cluster', 'create', '--cluster-template', 'k8s-v1.32', 'incomplete']);
    assert.equal(r.code, 0, r.stderr);
    const c = await json<Record<string, unknown>>(['coe', 'cluster', 'show', 'incomplete']);
    assert.equal(c.status, 'CREATE_FAILED');
    assert.equal(c.status_reason, 'Missing required fields: --master-flavor, --flavor, --keypair');
    const del = await openstack(['coe', 'cluster', 'delete', 'incomplete']);
    assert.equal(del.code, 0, del.stderr);
  });

  void test('even master counts and node groups above 10 are refused before anything is created', async () => {
    const even = await openstack([
      'coe',
      'cluster',
      'create',
      '--cluster-template',
      'k8s-v1.32',
      '--master-count',
      '2',
      '--master-flavor',
      'm1.medium',
      '--node-count',
      '1',
      '--flavor',
      'm1.medium',
      '--keypair',
      'my-keypair',
      'even',
    ]);
    assertHttpError(even, 400, /Master nodegroup size of 2 is invalid, size cannot be an even number/);
    const big = await openstack([
      'coe',
      'cluster',
      'create',
      '--cluster-template',
      'k8s-v1.32',
      '--master-count',
      '1',
      '--master-flavor',
      'm1.medium',
      '--node-count',
      '11',
      '--flavor',
      'm1.medium',
      '--keypair',
      'my-keypair',
      'big',
    ]);
    assertHttpError(
      big,
      400,
      /The node_count 11 of node group default-worker exceeds the limit of 10 worker nodes per node group; create an additional node group \(openstack coe nodegroup create\) for more workers/,
    );
  });

  void test('nodegroup list and show', async () => {
    const list = await json<
      {
        name: string;
        node_count: number;
        role: string;
        status: string;
        flavor_id: string;
        image_id: string;
      }[]
    >(['coe', 'nodegroup', 'list', 'production-kubernetes']);
    assert.deepEqual(
      list.map((g) => [g.name, g.role, g.node_count, g.status]),
      [
        ['default-master', 'master', 3, 'CREATE_IN_PROGRESS'],
        ['default-worker', 'worker', 3, 'CREATE_IN_PROGRESS'],
      ],
    );
    const workers = await json<{ name: string }[]>([
      'coe',
      'nodegroup',
      'list',
      'production-kubernetes',
      '--role',
      'worker',
    ]);
    assert.deepEqual(
      workers.map((g) => g.name),
      ['default-worker'],
    );
    const g = await json<Record<string, unknown>>([
      'coe',
      'nodegroup',
      'show',
      'production-kubernetes',
      'default-worker',
    ]);
    assert.equal(g.is_default, true);
    assert.equal(g.cluster_id, clusterUuid);
    assert.equal(g.flavor_id, 'm1.medium');
  });

  void test('nodegroup create (with --flavor and --labels availability_zone) is refused with 409 until the cluster has an API address, as Magnum does', async () => {
    // NOTE for the integrator: with the engine running and the cluster CREATE_COMPLETE these
    // must answer "Request to create nodegroup <uuid> accepted".
    const plain = await openstack([
      'coe',
      'nodegroup',
      'create',
      '--node-count',
      '5',
      'production-kubernetes',
      'worker-group2',
    ]);
    assertHttpError(
      plain,
      409,
      /The cluster production-kubernetes has no API address yet, so node groups cannot be added: wait until the cluster reaches CREATE_COMPLETE and retry/,
    );
    const az = await openstack([
      'coe',
      'nodegroup',
      'create',
      '--node-count',
      '2',
      '--flavor',
      'm1.large',
      '--labels',
      'availability_zone=AZ-2',
      'production-kubernetes',
      'worker-group-az2',
    ]);
    assertHttpError(az, 409, /no API address yet/);
  });

  void test('cluster resize --nodegroup answers as Magnum would now: the group does not exist, and the cluster is still being created', async () => {
    const r = await openstack([
      'coe',
      'cluster',
      'resize',
      '--nodegroup',
      'worker-group2',
      'production-kubernetes',
      '7',
    ]);
    assertHttpError(r, 404, /Nodegroup worker-group2 could not be found/);
    const d = await openstack(['coe', 'cluster', 'resize', 'production-kubernetes', '4']);
    assertHttpError(d, 400, /Resizing a cluster when status is "CREATE_IN_PROGRESS" is not supported/);
  });

  void test('cluster upgrade is refused while the cluster is being created, and a minor skip is refused', async () => {
    const r = await openstack(['coe', 'cluster', 'upgrade', 'production-kubernetes', 'k8s-v1.33']);
    assertHttpError(r, 400, /Upgrading a cluster when status is "CREATE_IN_PROGRESS" is not supported/);
  });

  void test('ca show prints the cluster CA', async () => {
    const r = await openstack(['coe', 'ca', 'show', 'production-kubernetes']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\s*$/);
  });

  void test('cluster config writes a kubeconfig whose client certificate verifies against the cluster CA', async () => {
    const dir = join(dataDir, 'kube');
    mkdirSync(dir);
    const r = await openstack(['coe', 'cluster', 'config', 'production-kubernetes', '--dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `export KUBECONFIG=${join(dir, 'config')}\n\n`); // followed by an empty line, as the client prints it
    const kubeconfig = parseYaml(readFileSync(join(dir, 'config'), 'utf8')) as {
      clusters: { name: string; cluster: { 'certificate-authority-data': string } }[];
      users: { user: { 'client-certificate-data': string } }[];
    };
    assert.equal(kubeconfig.clusters[0]!.name, 'production-kubernetes');
    writeFileSync(
      join(dir, 'ca.pem'),
      Buffer.from(kubeconfig.clusters[0]!.cluster['certificate-authority-data'], 'base64'),
    );
    writeFileSync(
      join(dir, 'cert.pem'),
      Buffer.from(kubeconfig.users[0]!.user['client-certificate-data'], 'base64'),
    );
    const verify = spawnSync('openssl', ['verify', '-CAfile', join(dir, 'ca.pem'), join(dir, 'cert.pem')], {
      encoding: 'utf8',
    });
    assert.match(verify.stdout, /OK/, verify.stderr);
    const subject = spawnSync('openssl', ['x509', '-noout', '-subject', '-in', join(dir, 'cert.pem')], {
      encoding: 'utf8',
    });
    assert.match(subject.stdout, /CN ?= ?admin/);
    assert.match(subject.stdout, /O ?= ?system:masters/);
  });

  void test('service list (admin) prints the table; a member is refused', async () => {
    // test setup: the heartbeat a Magnetar process publishes
    await m.store.create({
      apiVersion: MAGNUM_API_VERSION,
      kind: 'MService',
      metadata: { name: 'ctrl-1.magnum-conductor', namespace: '' },
      spec: { id: 1, host: 'ctrl-1', binary: 'magnum-conductor', disabled: false, disabledReason: null },
      status: { reportCount: 3, lastSeen: new Date().toISOString() },
    });
    const r = await openstack(['coe', 'service', 'list'], 'magnetar-admin');
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /\| id \| host +\| binary +\| state \| disabled \| disabled_reason \| created_at +\| updated_at +\|/,
    );
    assert.match(r.stdout, /\| +1 \| ctrl-1 \| magnum-conductor \| up +\| False +\| None +\|/);
    const member = await openstack(['coe', 'service', 'list']);
    assertHttpError(member, 403, /Policy doesn't allow magnum-service:get_all to be performed/);
  });

  void test('quotas: show the default, create, update, list and delete (admin)', async () => {
    const shown = await openstack([
      'coe',
      'quotas',
      'show',
      '--project-id',
      projectId,
      '--resource',
      'Cluster',
    ]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /\| hard_limit +\| 20 +\|/);
    const created = await openstack(
      ['coe', 'quotas', 'create', '--project-id', projectId, '--resource', 'Cluster', '--hard-limit', '10'],
      'magnetar-admin',
    );
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /\| hard_limit +\| 10 +\|/);
    const dup = await openstack(
      ['coe', 'quotas', 'create', '--project-id', projectId, '--resource', 'Cluster', '--hard-limit', '10'],
      'magnetar-admin',
    );
    assert.equal(dup.code, 0); // the client reports this failure on stdout with rc 0
    assert.match(
      dup.stdout,
      new RegExp(`Create quota for project_id ${projectId} resource Cluster failed: .*already exists`),
    );
    const updated = await openstack(
      ['coe', 'quotas', 'update', '--project-id', projectId, '--resource', 'Cluster', '--hard-limit', '15'],
      'magnetar-admin',
    );
    assert.equal(updated.code, 0, updated.stderr);
    assert.match(updated.stdout, /\| hard_limit +\| 15 +\|/);
    const list = await openstack(['coe', 'quotas', 'list', '--all-tenants'], 'magnetar-admin');
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /\| project_id +\| resource +\| hard_limit +\|/);
    assert.match(list.stdout, new RegExp(`\\| ${projectId} \\| Cluster +\\| 15 +\\|`));
    const deleted = await openstack(
      ['coe', 'quotas', 'delete', '--project-id', projectId, '--resource', 'Cluster'],
      'magnetar-admin',
    );
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(
      deleted.stdout,
      new RegExp(
        `Request to delete quota for project id ${projectId} and resource Cluster has been accepted`,
      ),
    );
  });

  void test('stats list counts clusters and nodes of the project', async () => {
    const r = await openstack(['coe', 'stats', 'list', projectId]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\| clusters +\| 1 +\|/);
    assert.match(r.stdout, /\| nodes +\| 6 +\|/);
  });

  void test('cluster delete is accepted; the cluster then reads DELETE_IN_PROGRESS', async () => {
    const r = await openstack(['coe', 'cluster', 'delete', 'production-kubernetes']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Request to delete cluster production-kubernetes has been accepted\./);
    const c = await json<Record<string, unknown>>(['coe', 'cluster', 'show', clusterUuid]);
    assert.equal(c.status, 'DELETE_IN_PROGRESS');
  });

  void test('an unknown cluster prints Magnum error title with the request id and exits 1', async () => {
    const r = await openstack(['coe', 'cluster', 'show', 'no-such-cluster']);
    assertHttpError(r, 404, /Cluster no-such-cluster could not be found/);
  });
});
