import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testConfig } from '../../src/cli/load-config.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';

/**
 * The real `openstack` client (python-openstackclient with octaviaclient) against the embedded
 * cloud, through Magnetar's identity and the clouds.yaml Magnetar writes: the catalog, version
 * discovery and the Nova, Neutron, Octavia, Cinder and Glance wire formats as the client parses
 * them, as `npm start` serves them (the cloud on its own thread behind `/cloud`). Skips when the
 * client is missing, unless MAGNETAR_REQUIRE_REAL_CLIENTS=1.
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

/** Run `openstack` as the demo user with only the generated clouds.yaml (no OS_* from the caller). */
function openstack(args: string[], cloud = 'magnetar-demo'): Promise<Run> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OS_')));
  const env = { ...clean, OS_CLIENT_CONFIG_FILE: join(dataDir, 'clouds.yaml'), OS_CLOUD: cloud };
  return new Promise((resolve) => {
    execFile('openstack', args, { env, timeout: 180_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Run, insist on success and a clean stderr (no discovery warnings). */
async function ok(args: string[], cloud?: string): Promise<string> {
  const r = await openstack(args, cloud);
  assert.equal(r.code, 0, `openstack ${args.join(' ')} failed: ${r.stderr}`);
  assert.doesNotMatch(
    r.stderr,
    /discover|warn|error|deprecat/i,
    `openstack ${args.join(' ')} wrote to stderr: ${r.stderr}`,
  );
  return r.stdout;
}

async function json<T>(args: string[], cloud?: string): Promise<T> {
  return JSON.parse(await ok([...args, '-f', 'json'], cloud)) as T;
}

void describe('openstack CLI against the embedded cloud', { skip, timeout: 30 * 60_000 }, () => {
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'magnetar-cloudsim-cli-'));
    // a store file, as `npm start` runs: the cloud on its own thread, the CLI through /cloud
    m = await startMagnetar({
      config: testConfig({ dataDir, store: { engine: 'sqlite', url: 'magnetar.sqlite' } }),
      controllers: false,
      logger: false,
    });
  });
  after(async () => {
    await m?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  void test('the openstack CLI is installed', () => {
    assert.ok(installed, 'openstack is required when MAGNETAR_REQUIRE_REAL_CLIENTS=1');
  });

  void test('flavor list and image list show the seeded region', async () => {
    const flavors = await json<{ Name: string; VCPUs: number; RAM: number }[]>(['flavor', 'list']);
    assert.deepEqual(
      flavors.map((f) => f.Name),
      ['m1.tiny', 'm1.small', 'm1.medium', 'm1.large', 'm1.xlarge'],
    );
    const images = await json<{ Name: string; Status: string }[]>(['image', 'list']);
    assert.deepEqual(images.map((i) => [i.Name, i.Status]).sort(), [
      ['fedora-coreos-38', 'active'],
      ['ubuntu-22.04-kube', 'active'],
    ]);
    const fcos = await json<{ properties: Record<string, string> }>(['image', 'show', 'fedora-coreos-38']);
    assert.equal(fcos.properties.os_distro, 'fedora-coreos');
    assert.equal(fcos.properties.os_admin_user, 'core');
  });

  void test('image create with --property and --file uploads an image with its properties', async () => {
    const file = join(dataDir, 'node.qcow2');
    writeFileSync(file, Buffer.alloc(64 * 1024, 7));
    await ok([
      'image',
      'create',
      'my-node-image',
      '--file',
      file,
      '--disk-format',
      'qcow2',
      '--container-format',
      'bare',
      '--property',
      'os_distro=fedora-coreos',
      '--property',
      'os_admin_user=core',
    ]);
    const img = await json<{ status: string; size: number; properties: Record<string, string> }>([
      'image',
      'show',
      'my-node-image',
    ]);
    assert.equal(img.status, 'active');
    assert.equal(img.size, 64 * 1024);
    assert.equal(img.properties.os_distro, 'fedora-coreos');
  });

  void test('keypair create prints a private key; keypair list shows it', async () => {
    const key = await ok(['keypair', 'create', 'cli-key']);
    assert.match(key, /-----BEGIN RSA PRIVATE KEY-----/);
    const list = await json<{ Name: string; Fingerprint: string }[]>(['keypair', 'list']);
    assert.deepEqual(
      list.map((k) => k.Name),
      ['cli-key'],
    );
  });

  void test('network, subnet, router with an interface and the public gateway, security group', async () => {
    await ok(['network', 'create', 'cli-net']);
    const subnet = await json<{ cidr: string; gateway_ip: string }>([
      'subnet',
      'create',
      'cli-subnet',
      '--network',
      'cli-net',
      '--subnet-range',
      '10.20.0.0/24',
    ]);
    assert.equal(subnet.gateway_ip, '10.20.0.1');
    await ok(['router', 'create', 'cli-router']);
    await ok(['router', 'add', 'subnet', 'cli-router', 'cli-subnet']);
    await ok(['router', 'set', 'cli-router', '--external-gateway', 'public']);
    const router = await json<{
      external_gateway_info: { network_id: string; external_fixed_ips: { ip_address: string }[] };
    }>(['router', 'show', 'cli-router']);
    assert.match(
      router.external_gateway_info.external_fixed_ips[0]!.ip_address,
      /^172\.24\.([0-9]|1[0-5])\./,
    );
    await ok(['security', 'group', 'create', 'cli-sg']);
    const nets = await json<{ Name: string }[]>(['network', 'list']);
    assert.deepEqual(nets.map((n) => n.Name).sort(), ['cli-net', 'public']);
  });

  void test('server create --wait reaches ACTIVE in the asked zone; list, show, floating IP, delete', async () => {
    const server = await json<{ status: string; 'OS-EXT-AZ:availability_zone': string; id: string }>([
      'server',
      'create',
      '--flavor',
      'm1.small',
      '--image',
      'fedora-coreos-38',
      '--network',
      'cli-net',
      '--availability-zone',
      'AZ-2',
      '--key-name',
      'cli-key',
      '--security-group',
      'cli-sg',
      '--wait',
      'cli-vm',
    ]);
    assert.equal(server.status, 'ACTIVE');
    assert.equal(server['OS-EXT-AZ:availability_zone'], 'AZ-2');
    const list = await json<{ Name: string; Status: string; Networks: Record<string, string[]> | string }[]>([
      'server',
      'list',
    ]);
    assert.deepEqual(
      list.map((s) => [s.Name, s.Status]),
      [['cli-vm', 'ACTIVE']],
    );

    const fip = await json<{ floating_ip_address: string }>(['floating', 'ip', 'create', 'public']);
    await ok(['server', 'add', 'floating', 'ip', 'cli-vm', fip.floating_ip_address]);
    const shown = await json<{ addresses: Record<string, string[]>; key_name: string }>([
      'server',
      'show',
      'cli-vm',
    ]);
    assert.deepEqual(shown.addresses['cli-net']?.length, 2);
    assert.ok(shown.addresses['cli-net'].includes(fip.floating_ip_address));
    assert.equal(shown.key_name, 'cli-key');

    await ok(['server', 'delete', '--wait', 'cli-vm']);
    assert.deepEqual(await json<unknown[]>(['server', 'list']), []);
  });

  void test('volume create, list and delete', async () => {
    const v = await json<{ id: string; size: number }>(['volume', 'create', '--size', '2', 'cli-vol']);
    assert.equal(v.size, 2);
    const list = await json<{ Name: string; Status: string }[]>(['volume', 'list']);
    assert.deepEqual(
      list.map((x) => x.Name),
      ['cli-vol'],
    );
    await ok(['volume', 'delete', 'cli-vol']);
  });

  void test('loadbalancer create and list (octaviaclient)', async () => {
    const lb = await json<{ provisioning_status: string; vip_address: string }>([
      'loadbalancer',
      'create',
      '--name',
      'cli-lb',
      '--vip-subnet-id',
      'cli-subnet',
    ]);
    assert.match(lb.vip_address, /^10\.20\.0\./);
    const list = await json<{ name: string; provisioning_status: string }[]>(['loadbalancer', 'list']);
    assert.deepEqual(
      list.map((x) => [x.name, x.provisioning_status]),
      [['cli-lb', 'ACTIVE']],
    );
  });

  void test('availability zone list and quota show', async () => {
    const zones = await json<{ 'Zone Name': string }[]>(['availability', 'zone', 'list', '--compute']);
    assert.deepEqual(
      zones.map((z) => z['Zone Name']),
      ['AZ-1', 'AZ-2', 'AZ-3'],
    );
    const quota = await json<Record<string, unknown>>(['quota', 'show']);
    assert.equal(quota.instances, 20);
    assert.equal(quota['floating-ips'], 50);
    assert.equal(quota.volumes, 10);
  });

  void test('keypair delete removes it', async () => {
    await ok(['keypair', 'delete', 'cli-key']);
    assert.deepEqual(await json<unknown[]>(['keypair', 'list']), []);
  });
});
