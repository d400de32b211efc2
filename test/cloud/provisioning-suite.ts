import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  CloudError,
  createCloudClients,
  createCloudLookup,
  deleteIgnoringNotFound,
  isNotFound,
  type CloudClients,
  type Image,
  type LoadBalancer,
  type Network,
  type Port,
  type SecurityGroup,
  type Server,
  type Session,
  type Subnet,
} from '../../src/cloud/index.ts';
import type { AuthContext } from '../../src/domain/index.ts';

/**
 * The provisioning calls a Cluster API infrastructure controller makes, end to end, written
 * against a `Session` only: the same suite runs against the embedded cloud and, later, a real
 * OpenStack. Fault-injection steps run only where the target can inject faults.
 */

/** A failure the target's fault injection can produce on the next call of an operation. */
export type InjectedFailure =
  | { type: 'http'; status: number; message?: string }
  | { type: 'quota'; resource?: string }
  | { type: 'error-state'; message?: string };

/** Where the suite runs. */
export interface SuiteTarget {
  /** A member of a tenant project. */
  session: Session;
  /** External network for the router gateway and floating IPs. */
  externalNetwork: string;
  /** Compute availability zone for the server (and the volume, unless `volumeAvailabilityZone`). */
  availabilityZone: string;
  /** Block-storage availability zone when it differs from the compute one (Cinder's own zones). */
  volumeAvailabilityZone?: string;
  /** Whether the cloud offers an object store (Swift). @default true */
  objectStore?: boolean;
  /** Whether Octavia takes the VIP from the subnet (a no-op driver answers a fixed address). @default true */
  lbVipInSubnet?: boolean;
  /** Whether Cinder can make a volume from an image (a fake volume driver cannot). @default true */
  bootFromVolume?: boolean;
  /** Flavor name for the server. */
  flavor: string;
  /** `os_distro` of a node image that must exist. */
  osDistro: string;
  /** A volume size certainly above the project's gigabytes quota. */
  volumeSizeOverQuotaGb: number;
  /** Let time pass between polls (virtual or real). */
  settle(ms: number): Promise<void>;
  /** Fail the next call of an operation (embedded cloud only). */
  injectFault?(operation: string, failure: InjectedFailure): Promise<void>;
  /** Remove every injected fault. */
  clearFaults?(): Promise<void>;
  close(): Promise<void>;
}

/** Poll `read` until `done` holds; fails with the last value after `attempts`. */
async function eventually<T>(
  target: SuiteTarget,
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  attempts = 120,
  stepMs = 1000,
): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < attempts; i++) {
    last = await read();
    if (done(last)) return last;
    await target.settle(stepMs);
  }
  assert.fail(`${what}: still not there after ${attempts} polls; last: ${JSON.stringify(last)}`);
}

/** Resolves to the CloudError a call fails with. */
async function failure(call: Promise<unknown>): Promise<CloudError> {
  const outcome = await call.then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.ok(outcome instanceof CloudError, `expected a CloudError, got ${String(outcome)}`);
  return outcome;
}

/** A fresh OpenSSH ed25519 public key line. */
function sshPublicKey(comment: string): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const field = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    return Buffer.concat([len, b]);
  };
  return `ssh-ed25519 ${Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]).toString('base64')} ${comment}`;
}

function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const toInt = (a: string) => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toInt(ip) / size) === Math.floor(toInt(base!) / size);
}

/** Register the provisioning suite under `name`; `start` makes a fresh target. */
export function provisioningSuite(name: string, start: () => Promise<SuiteTarget>): void {
  void describe(name, () => {
    let target: SuiteTarget;
    let c: CloudClients;
    const run = `ct-${randomBytes(3).toString('hex')}`;
    const tag = `suite-${run}`;
    const s: {
      image?: Image;
      flavorId?: string;
      external?: Network;
      network?: Network;
      subnet?: Subnet;
      routerId?: string;
      sg?: SecurityGroup;
      port?: Port;
      server?: Server;
      fipId?: string;
      lb?: LoadBalancer;
      volumeId?: string;
      keypair?: string;
    } = {};

    before(async () => {
      target = await start();
      c = createCloudClients(target.session);
    });

    after(async () => {
      // Leave nothing behind, also when a step failed half way.
      if (!target) return;
      await target.clearFaults?.();
      const quiet = async (fn: () => Promise<unknown>) => {
        try {
          await deleteIgnoringNotFound(fn);
        } catch {
          // best effort: the assertions already reported the failure
        }
      };
      if (s.lb) await quiet(() => c.loadBalancer.deleteLoadBalancer(s.lb!.id, { cascade: true }));
      if (s.fipId) await quiet(() => c.network.deleteFloatingIp(s.fipId!));
      if (s.server) await quiet(() => c.compute.deleteServer(s.server!.id));
      if (s.volumeId) await quiet(() => c.volume.deleteVolume(s.volumeId!));
      if (s.keypair) await quiet(() => c.compute.deleteKeypair(s.keypair!));
      await target.close();
    });

    void test('finds a node image by os_distro and by name, and the flavor by name', async () => {
      const images = await c.image.listImages({ properties: { os_distro: target.osDistro } });
      assert.ok(images.length > 0, `an image with os_distro=${target.osDistro}`);
      const image = images[0]!;
      assert.equal(image.osDistro, target.osDistro);
      assert.equal(image.status, 'active');
      assert.ok(image.osAdminUser, 'os_admin_user is read as a property');
      const byName = await c.image.findImage(image.name);
      assert.ok(byName && byName !== 'ambiguous');
      assert.equal(byName.id, image.id);
      assert.equal(await c.image.findImage(`no-such-image-${run}`), undefined);
      s.image = image;

      const flavor = await c.compute.findFlavor(target.flavor);
      assert.ok(flavor && flavor !== 'ambiguous', `flavor ${target.flavor}`);
      assert.ok(flavor.vcpus > 0 && flavor.ramMb > 0);
      assert.deepEqual(await c.compute.getFlavor(flavor.id), flavor);
      s.flavorId = flavor.id;
    });

    void test('imports a keypair and reads it back', async () => {
      const name = `${run}-key`;
      const publicKey = sshPublicKey(`${run}@suite`);
      const created = await c.compute.createKeypair({ name, publicKey });
      s.keypair = name;
      assert.equal(created.name, name);
      assert.equal(created.privateKey, undefined);
      const got = await c.compute.getKeypair(name);
      assert.equal(got.publicKey.trim(), publicKey);
      assert.ok((await c.compute.listKeypairs()).some((k) => k.name === name));
      const dup = await failure(c.compute.createKeypair({ name, publicKey }));
      assert.equal(dup.kind, 'conflict');

      const generated = await c.compute.createKeypair({ name: `${run}-generated` });
      assert.match(generated.privateKey ?? '', /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
      assert.ok(generated.publicKey.length > 0);
      await c.compute.deleteKeypair(generated.name);
    });

    void test('creates a tagged network, a subnet and a router to the external network', async () => {
      const externals = await c.network.listExternalNetworks();
      const external = externals.find((n) => n.name === target.externalNetwork);
      assert.ok(external, `external network ${target.externalNetwork}`);
      assert.equal(external.external, true);
      s.external = external;

      const network = await c.network.createNetwork({
        name: `${run}-net`,
        description: 'provisioning suite',
        tags: [tag],
      });
      s.network = network;
      assert.deepEqual(network.tags, [tag]);
      const subnet = await c.network.createSubnet({
        networkId: network.id,
        name: `${run}-subnet`,
        cidr: '10.6.0.0/24',
        dnsNameservers: ['8.8.8.8'],
        tags: [tag],
      });
      s.subnet = subnet;
      assert.equal(subnet.cidr, '10.6.0.0/24');
      assert.equal(subnet.gatewayIp, '10.6.0.1');

      const router = await c.network.createRouter({
        name: `${run}-router`,
        externalNetworkId: external.id,
        tags: [tag],
      });
      s.routerId = router.id;
      assert.equal(router.externalGateway?.networkId, external.id);
      const itf = await c.network.addRouterInterface(router.id, { subnetId: subnet.id });
      assert.equal(itf.subnetId, subnet.id);
      const routerPorts = await c.network.listPorts({ deviceId: router.id, networkId: network.id });
      assert.equal(routerPorts.length, 1);
      assert.equal(routerPorts[0]!.fixedIps[0]?.ipAddress, '10.6.0.1');

      // Deterministic look-ups: by name and by tag, one call each.
      assert.deepEqual(
        (await c.network.listNetworks({ name: `${run}-net` })).map((n) => n.id),
        [network.id],
      );
      assert.deepEqual(
        (await c.network.listNetworks({ tags: [tag] })).map((n) => n.id),
        [network.id],
      );
      assert.deepEqual(
        (await c.network.listRouters({ tags: [tag] })).map((r) => r.id),
        [router.id],
      );
      const found = await c.network.findNetwork(network.id);
      assert.ok(found && found !== 'ambiguous' && found.subnetIds.includes(subnet.id));

      const quota = await c.network.getQuota();
      assert.ok(quota.network && quota.network.limit !== 0, JSON.stringify(quota));
      if (quota.router?.used !== undefined) assert.ok(quota.router.used >= 1);
    });

    void test('creates a security group with rules and refuses a duplicate rule', async () => {
      const sg = await c.network.createSecurityGroup({
        name: `${run}-secgroup-controlplane`,
        description: 'control plane',
        tags: [tag],
      });
      s.sg = sg;
      const api = await c.network.createSecurityGroupRule({
        securityGroupId: sg.id,
        direction: 'ingress',
        protocol: 'tcp',
        portRangeMin: 6443,
        portRangeMax: 6443,
        remoteIpPrefix: '0.0.0.0/0',
        description: 'Kubernetes API',
      });
      await c.network.createSecurityGroupRule({
        securityGroupId: sg.id,
        direction: 'ingress',
        protocol: 'tcp',
        portRangeMin: 2379,
        portRangeMax: 2380,
        remoteGroupId: sg.id,
        description: 'etcd',
      });
      assert.equal(api.portRangeMin, 6443);
      assert.equal(api.protocol, 'tcp');
      const rules = await c.network.listSecurityGroupRules({ securityGroupId: sg.id });
      assert.ok(rules.some((r) => r.id === api.id));
      assert.ok(rules.some((r) => r.remoteGroupId === sg.id && r.portRangeMax === 2380));
      const dup = await failure(
        c.network.createSecurityGroupRule({
          securityGroupId: sg.id,
          direction: 'ingress',
          protocol: 'tcp',
          portRangeMin: 6443,
          portRangeMax: 6443,
          remoteIpPrefix: '0.0.0.0/0',
        }),
      );
      assert.equal(dup.kind, 'conflict');
      assert.equal((await c.network.getSecurityGroup(sg.id)).rules.length, rules.length);

      // several rules in one request: all made, or none when one of them exists already
      const kubelet = { securityGroupId: sg.id, direction: 'ingress' as const, protocol: 'tcp' };
      const both = await c.network.createSecurityGroupRules([
        { ...kubelet, portRangeMin: 10250, portRangeMax: 10250, remoteGroupId: sg.id },
        { ...kubelet, portRangeMin: 30000, portRangeMax: 32767, remoteIpPrefix: '0.0.0.0/0' },
      ]);
      assert.deepEqual(
        both.map((r) => r.portRangeMax),
        [10250, 32767],
      );
      const refused = await failure(
        c.network.createSecurityGroupRules([
          { ...kubelet, portRangeMin: 4240, portRangeMax: 4240, remoteGroupId: sg.id },
          { ...kubelet, portRangeMin: 6443, portRangeMax: 6443, remoteIpPrefix: '0.0.0.0/0' },
        ]),
      );
      assert.equal(refused.kind, 'conflict');
      assert.equal((await c.network.getSecurityGroup(sg.id)).rules.length, rules.length + 2);
    });

    void test('creates a port with a fixed IP in the subnet and the security group', async () => {
      const port = await c.network.createPort({
        networkId: s.network!.id,
        name: `${run}-control-plane-0`,
        fixedIps: [{ subnetId: s.subnet!.id }],
        securityGroupIds: [s.sg!.id],
        tags: [tag],
      });
      s.port = port;
      const ip = port.fixedIps[0]?.ipAddress;
      assert.ok(ip && inCidr(ip, '10.6.0.0/24'), `fixed IP ${ip} in 10.6.0.0/24`);
      assert.deepEqual(port.securityGroupIds, [s.sg!.id]);
      assert.deepEqual(
        (await c.network.listPorts({ name: port.name, networkId: s.network!.id })).map((p) => p.id),
        [port.id],
      );
      assert.deepEqual(
        (await c.network.listPorts({ ipAddress: ip, networkId: s.network!.id })).map((p) => p.id),
        [port.id],
      );
    });

    void test('boots a server on the port in the requested availability zone', async () => {
      const { id } = await c.compute.createServer({
        name: `${run}-control-plane-0`,
        flavorId: s.flavorId!,
        imageId: s.image!.id,
        availabilityZone: target.availabilityZone,
        networks: [{ portId: s.port!.id }],
        keyName: s.keypair!,
        userData: '#cloud-config\nruncmd: [echo hello]\n',
        metadata: { cluster: run },
        tags: [tag],
      });
      const server = await eventually(
        target,
        'server ACTIVE',
        () => c.compute.getServer(id),
        (sv) => sv.status === 'ACTIVE' || sv.status === 'ERROR',
      );
      s.server = server;
      assert.equal(server.status, 'ACTIVE', `fault: ${server.fault?.message}`);
      assert.equal(server.availabilityZone, target.availabilityZone);
      assert.equal(server.keyName, s.keypair);
      assert.deepEqual(server.metadata, { cluster: run });
      assert.ok(server.tags.includes(tag));
      assert.ok(
        server.addresses.some((a) => a.addr === s.port!.fixedIps[0]!.ipAddress),
        JSON.stringify(server.addresses),
      );
      assert.deepEqual(
        (await c.compute.listServers({ name: server.name })).map((x) => x.id),
        [id],
      );
      assert.deepEqual(
        (await c.compute.listServers({ tags: [tag] })).map((x) => x.id),
        [id],
      );
      assert.deepEqual(
        await c.compute.listServers({ name: `${run}-control-plane` }),
        [],
        'the name filter is exact, not a prefix',
      );
      assert.equal((await c.network.getPort(s.port!.id)).deviceId, id);
      const zones = await c.compute.listAvailabilityZones();
      assert.ok(zones.some((z) => z.name === target.availabilityZone && z.available));
      const limits = await c.compute.getLimits();
      assert.ok(limits.instances.used >= 1 && limits.cores.max !== 0);
    });

    void test('allocates a floating IP on the external network and associates it with the port', async () => {
      const fip = await c.network.createFloatingIp({
        floatingNetworkId: s.external!.id,
        description: `${run} api`,
        tags: [tag],
      });
      s.fipId = fip.id;
      assert.equal(fip.portId, undefined);
      const associated = await c.network.associateFloatingIp(fip.id, s.port!.id);
      assert.equal(associated.portId, s.port!.id);
      assert.equal(associated.fixedIpAddress, s.port!.fixedIps[0]!.ipAddress);
      assert.deepEqual(
        (await c.network.listFloatingIps({ portId: s.port!.id })).map((f) => f.id),
        [fip.id],
      );
      const byAddress = await c.network.listFloatingIps({ floatingIpAddress: fip.floatingIpAddress });
      assert.equal(byAddress.length, 1);
      const detached = await c.network.disassociateFloatingIp(fip.id);
      assert.equal(detached.portId, undefined);
    });

    void test('creates a load balancer and brings it to ACTIVE with listener, pool, monitor and member', async () => {
      const waitActive = (what: string) =>
        eventually(
          target,
          `${what}: load balancer ACTIVE`,
          () => c.loadBalancer.getLoadBalancer(s.lb!.id),
          (l) => l.provisioningStatus === 'ACTIVE' || l.provisioningStatus === 'ERROR',
        );
      s.lb = await c.loadBalancer.createLoadBalancer({
        name: `${run}-kubeapi`,
        vipSubnetId: s.subnet!.id,
        tags: [tag],
      });
      assert.ok(['PENDING_CREATE', 'ACTIVE'].includes(s.lb.provisioningStatus));
      let lb = await waitActive('create');
      assert.equal(lb.provisioningStatus, 'ACTIVE');
      assert.ok(lb.vipAddress);
      if (target.lbVipInSubnet !== false) assert.ok(inCidr(lb.vipAddress, '10.6.0.0/24'), lb.vipAddress);
      assert.ok(lb.vipPortId);

      const listener = await c.loadBalancer.createListener({
        loadBalancerId: lb.id,
        name: `${run}-kubeapi-6443`,
        protocol: 'TCP',
        protocolPort: 6443,
        allowedCidrs: ['0.0.0.0/0'],
      });
      await waitActive('listener');
      const pool = await c.loadBalancer.createPool({
        name: `${run}-kubeapi-6443`,
        protocol: 'TCP',
        listenerId: listener.id,
      });
      await waitActive('pool');
      const monitor = await c.loadBalancer.createHealthMonitor({
        poolId: pool.id,
        name: `${run}-kubeapi-6443`,
        type: 'TCP',
        delay: 10,
        timeout: 5,
        maxRetries: 5,
        maxRetriesDown: 3,
      });
      await waitActive('monitor');
      const member = await c.loadBalancer.createMember(pool.id, {
        name: `${run}-control-plane-0`,
        address: s.port!.fixedIps[0]!.ipAddress!,
        protocolPort: 6443,
        subnetId: s.subnet!.id,
      });
      lb = await waitActive('member');

      assert.deepEqual(lb.listenerIds, [listener.id]);
      const got = await c.loadBalancer.getPool(pool.id);
      assert.deepEqual(got.memberIds, [member.id]);
      assert.equal(got.healthMonitorId, monitor.id);
      assert.equal((await c.loadBalancer.getListener(listener.id)).defaultPoolId, pool.id);
      assert.equal((await c.loadBalancer.getHealthMonitor(monitor.id)).maxRetriesDown, 3);
      assert.deepEqual(
        (await c.loadBalancer.listMembers(pool.id)).map((m) => m.address),
        [s.port!.fixedIps[0]!.ipAddress],
      );
      assert.deepEqual(
        (await c.loadBalancer.listLoadBalancers({ name: `${run}-kubeapi` })).map((l) => l.id),
        [lb.id],
      );
      assert.deepEqual(
        (await c.loadBalancer.listListeners({ loadBalancerId: lb.id })).map((l) => l.id),
        [listener.id],
      );
    });

    void test('creates a volume in the availability zone and sees it become available', async () => {
      const volume = await c.volume.createVolume({
        name: `${run}-root`,
        sizeGb: 1,
        availabilityZone: target.volumeAvailabilityZone ?? target.availabilityZone,
        metadata: { cluster: run },
      });
      s.volumeId = volume.id;
      const ready = await eventually(
        target,
        'volume available',
        () => c.volume.getVolume(volume.id),
        (v) => v.status === 'available' || v.status === 'error',
      );
      assert.equal(ready.status, 'available');
      assert.equal(ready.sizeGb, 1);
      assert.equal(ready.availabilityZone, target.volumeAvailabilityZone ?? target.availabilityZone);
      assert.deepEqual(
        (await c.volume.listVolumes({ name: `${run}-root` })).map((v) => v.id),
        [volume.id],
      );
    });

    void test('boots a server from a volume made from the image, and the volume goes with it', async (t) => {
      if (target.bootFromVolume === false) return t.skip('the cloud cannot make volumes from images');
      const { id } = await c.compute.createServer({
        name: `${run}-bfv`,
        flavorId: s.flavorId!,
        availabilityZone: target.availabilityZone,
        networks: [{ networkId: s.network!.id }],
        blockDevices: [
          {
            sourceType: 'image',
            destinationType: 'volume',
            uuid: s.image!.id,
            bootIndex: 0,
            volumeSizeGb: 10,
            deleteOnTermination: true,
          },
        ],
        tags: [tag],
      });
      const server = await eventually(
        target,
        'boot-from-volume server ACTIVE',
        () => c.compute.getServer(id),
        (sv) => sv.status !== 'BUILD',
      );
      assert.equal(server.status, 'ACTIVE', `fault: ${server.fault?.message}`);
      assert.equal(server.volumeIds.length, 1);
      const root = await c.volume.getVolume(server.volumeIds[0]!);
      assert.equal(root.sizeGb, 10);
      assert.equal(root.bootable, true);
      assert.ok(root.attachments.some((a) => a.serverId === id));
      await c.compute.deleteServer(id);
      await eventually(
        target,
        'boot-from-volume server gone',
        () =>
          c.compute.getServer(id).then(
            (sv) => sv.status === 'DELETED',
            (e: unknown) => isNotFound(e),
          ),
        (gone) => gone,
      );
      await eventually(
        target,
        'root volume deleted with its server',
        () =>
          c.volume.getVolume(root.id).then(
            (v) => v.status === 'deleting',
            (e: unknown) => isNotFound(e),
          ),
        (gone) => gone,
      );
    });

    void test('uploads a private image and finds it by its properties', async () => {
      const created = await c.image.createImage({
        name: `${run}-image`,
        visibility: 'private',
        properties: { os_distro: `${run}-os`, os_admin_user: 'core' },
      });
      assert.equal(created.status, 'queued');
      await c.image.uploadImageData(created.id, randomBytes(2048));
      const active = await eventually(
        target,
        'image active',
        () => c.image.getImage(created.id),
        (i) => i.status === 'active' || i.status === 'killed',
      );
      assert.equal(active.status, 'active');
      assert.equal(active.sizeBytes, 2048);
      assert.deepEqual(
        (await c.image.listImages({ properties: { os_distro: `${run}-os` } })).map((i) => i.id),
        [created.id],
      );
      const again = await c.image.findImage(created.id);
      assert.ok(again && again !== 'ambiguous');
      assert.equal(again.osAdminUser, 'core');
      await c.image.deleteImage(created.id);
      assert.ok(isNotFound(await failure(c.image.getImage(created.id))));
    });

    void test('resolves images, flavors, keypairs, networks and zones as the caller sees them (CloudLookup)', async () => {
      const session = target.session;
      const projectId = await session.projectId();
      const auth: AuthContext = {
        token: await session.token(),
        userId: (await session.userId()) ?? '',
        userName: '',
        userDomainId: 'default',
        roles: ['member'],
        isServiceAccount: false,
        isAdmin: false,
        expiresAt: '',
        methods: ['password'],
        ...(projectId ? { projectId } : {}),
      };
      const lookup = createCloudLookup({ sessionFor: (a) => session.forToken(a.token, a.projectId) });
      const image = await lookup.findImage(auth, s.image!.name);
      assert.ok(image && image !== 'ambiguous');
      assert.equal(image.osDistro, target.osDistro);
      const flavor = await lookup.findFlavor(auth, target.flavor);
      assert.ok(flavor && flavor !== 'ambiguous' && flavor.id === s.flavorId);
      assert.equal((await lookup.findKeypair(auth, s.keypair!))?.name, s.keypair);
      assert.equal(await lookup.findKeypair(auth, `${run}-no-such-key`), undefined);
      const external = await lookup.findNetwork(auth, target.externalNetwork);
      assert.ok(external && external !== 'ambiguous' && external.external);
      const subnet = await lookup.findSubnet(auth, s.subnet!.id);
      assert.ok(subnet && subnet !== 'ambiguous' && subnet.cidr === '10.6.0.0/24');
      assert.ok((await lookup.availabilityZones(auth)).includes(target.availabilityZone));

      const authUrl = session.config.auth.auth_url;
      if (authUrl) {
        // The same answers when the lookup exchanges the caller's token at Keystone itself.
        const viaKeystone = createCloudLookup({ authUrl });
        try {
          const again = await viaKeystone.findImage(auth, s.image!.name);
          assert.ok(again && again !== 'ambiguous' && again.id === image.id);
          assert.equal((await viaKeystone.findKeypair(auth, s.keypair!))?.name, s.keypair);
        } finally {
          viaKeystone.close();
        }
      }
    });

    void test('a volume beyond the project quota is refused as a quota error', async () => {
      const err = await failure(
        c.volume.createVolume({ name: `${run}-huge`, sizeGb: target.volumeSizeOverQuotaGb }),
      );
      assert.equal(err.kind, 'quota', err.message);
      assert.equal(err.transient, false);
      assert.ok(err.cloudMessage.length > 0);
    });

    void test('stores, lists, reads and deletes objects', async (t) => {
      if (target.objectStore === false) return t.skip('the cloud has no object store');
      const container = `${run}-etcd-backups`;
      await c.objectStore.createContainer(container, { metadata: { cluster: run } });
      const payload = randomBytes(4096);
      const { etag } = await c.objectStore.putObject(container, 'snapshots/2026-01-01.db', payload, {
        contentType: 'application/octet-stream',
        metadata: { revision: '42' },
      });
      assert.match(etag, /^[0-9a-f]{32}$/);
      const listed = await c.objectStore.listObjects(container, { prefix: 'snapshots/' });
      assert.deepEqual(
        listed.map((o) => [o.name, o.sizeBytes]),
        [['snapshots/2026-01-01.db', 4096]],
      );
      const got = await c.objectStore.getObject(container, 'snapshots/2026-01-01.db');
      assert.ok(got.data.equals(payload));
      assert.equal(got.metadata.revision, '42');
      const head = await c.objectStore.headObject(container, 'snapshots/2026-01-01.db');
      assert.equal(head.sizeBytes, 4096);
      assert.equal((await c.objectStore.headContainer(container)).objectCount, 1);
      assert.equal(
        (await failure(c.objectStore.deleteContainer(container))).kind,
        'conflict',
        'a container with objects cannot be deleted',
      );
      await c.objectStore.deleteObject(container, 'snapshots/2026-01-01.db');
      assert.ok(isNotFound(await failure(c.objectStore.getObject(container, 'snapshots/2026-01-01.db'))));
      await c.objectStore.deleteContainer(container);
      assert.ok(!(await c.objectStore.listContainers()).some((x) => x.name === container));
    });

    void test('injected quota refusals of Nova, Neutron and Octavia are classified as quota', async (t) => {
      if (!target.injectFault) return t.skip('the target cannot inject faults');
      await target.injectFault('compute.servers.create', { type: 'quota', resource: 'cores' });
      const nova = await failure(
        c.compute.createServer({
          name: `${run}-q`,
          flavorId: s.flavorId!,
          imageId: s.image!.id,
          networks: 'none',
        }),
      );
      await target.injectFault('network.floatingips.create', { type: 'quota', resource: 'floatingip' });
      const neutron = await failure(c.network.createFloatingIp({ floatingNetworkId: s.external!.id }));
      await target.injectFault('load-balancer.loadbalancers.create', { type: 'quota' });
      const octavia = await failure(
        c.loadBalancer.createLoadBalancer({ name: `${run}-q`, vipSubnetId: s.subnet!.id }),
      );
      for (const [svc, err] of [
        ['nova', nova],
        ['neutron', neutron],
        ['octavia', octavia],
      ] as const) {
        assert.equal(err.kind, 'quota', `${svc}: ${err.message}`);
      }
      assert.equal(neutron.cloudCode, 'OverQuota');
      assert.deepEqual(
        await c.compute.listServers({ name: `${run}-q` }),
        [],
        'a refused create leaves nothing',
      );
    });

    void test('an injected 503 on a read is retried transparently; on a create it is reported as transient', async (t) => {
      if (!target.injectFault) return t.skip('the target cannot inject faults');
      await target.injectFault('network.networks.show', { type: 'http', status: 503 });
      assert.equal((await c.network.getNetwork(s.network!.id)).id, s.network!.id);
      await target.injectFault('network.networks.create', { type: 'http', status: 503 });
      const err = await failure(c.network.createNetwork({ name: `${run}-flaky` }));
      assert.equal(err.kind, 'transient');
      assert.equal(err.status, 503);
      assert.deepEqual(
        await c.network.listNetworks({ name: `${run}-flaky` }),
        [],
        'a POST is not repeated behind the caller',
      );
    });

    void test('a server that fails to build reports ERROR with the fault message', async (t) => {
      if (!target.injectFault) return t.skip('the target cannot inject faults');
      await target.injectFault('compute.servers.create', {
        type: 'error-state',
        message: 'No valid host was found. There are not enough hosts available.',
      });
      const { id } = await c.compute.createServer({
        name: `${run}-doomed`,
        flavorId: s.flavorId!,
        imageId: s.image!.id,
        networks: [{ networkId: s.network!.id }],
      });
      const server = await eventually(
        target,
        'server ERROR',
        () => c.compute.getServer(id),
        (sv) => sv.status !== 'BUILD',
      );
      assert.equal(server.status, 'ERROR');
      assert.match(server.fault?.message ?? '', /No valid host was found/);
      await c.compute.deleteServer(id);
      await eventually(
        target,
        'doomed server gone',
        () =>
          c.compute.getServer(id).then(
            () => false,
            (e: unknown) => isNotFound(e),
          ),
        (gone) => gone,
      );
    });

    void test('deletes everything; a second delete counts as already deleted', async () => {
      await c.loadBalancer.deleteLoadBalancer(s.lb!.id, { cascade: true });
      await eventually(
        target,
        'load balancer gone',
        () =>
          c.loadBalancer.getLoadBalancer(s.lb!.id).then(
            () => false,
            (e: unknown) => isNotFound(e),
          ),
        (gone) => gone,
      );
      assert.equal(
        await deleteIgnoringNotFound(() => c.loadBalancer.deleteLoadBalancer(s.lb!.id, { cascade: true })),
        false,
      );

      await c.network.deleteFloatingIp(s.fipId!);
      assert.equal(await deleteIgnoringNotFound(() => c.network.deleteFloatingIp(s.fipId!)), false);

      await c.compute.deleteServer(s.server!.id);
      // Real Nova may show a deleting server as DELETED for a moment and still accept a second
      // DELETE then: "already deleted" holds once the server reads as not found.
      await eventually(
        target,
        'server gone',
        () =>
          c.compute.getServer(s.server!.id).then(
            () => false,
            (e: unknown) => isNotFound(e),
          ),
        (gone) => gone,
      );
      assert.equal(await deleteIgnoringNotFound(() => c.compute.deleteServer(s.server!.id)), false);

      await c.volume.deleteVolume(s.volumeId!);
      await eventually(
        target,
        'volume gone',
        () =>
          c.volume.getVolume(s.volumeId!).then(
            () => false,
            (e: unknown) => isNotFound(e),
          ),
        (gone) => gone,
      );

      const updated = await c.network.updatePort(s.port!.id, { securityGroupIds: [] });
      assert.deepEqual(updated.securityGroupIds, []);
      await c.network.deletePort(s.port!.id);
      assert.equal(await deleteIgnoringNotFound(() => c.network.deletePort(s.port!.id)), false);
      await c.network.removeRouterInterface(s.routerId!, { subnetId: s.subnet!.id });
      const cleared = await c.network.setRouterGateway(s.routerId!, null);
      assert.equal(cleared.externalGateway, undefined);
      await c.network.deleteRouter(s.routerId!);
      await c.network.deleteSecurityGroup(s.sg!.id);
      await c.network.deleteSubnet(s.subnet!.id);
      await c.network.deleteNetwork(s.network!.id);
      assert.equal(await deleteIgnoringNotFound(() => c.network.deleteNetwork(s.network!.id)), false);
      await c.compute.deleteKeypair(s.keypair!);
      assert.ok(isNotFound(await failure(c.compute.getKeypair(s.keypair!))));

      // Nothing tagged by this run is left.
      assert.deepEqual(await c.network.listNetworks({ tags: [tag] }), []);
      assert.deepEqual(await c.network.listRouters({ tags: [tag] }), []);
      assert.deepEqual(await c.network.listPorts({ tags: [tag] }), []);
      assert.deepEqual(await c.network.listFloatingIps({ tags: [tag] }), []);
      assert.deepEqual(await c.compute.listServers({ tags: [tag] }), []);
      assert.deepEqual(await c.loadBalancer.listLoadBalancers({ tags: [tag] }), []);
    });
  });
}
