import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCloud, uuid, type CloudHarness } from './harness.ts';

type Obj = Record<string, unknown> & { id: string };

async function post<T = Obj>(
  h: CloudHarness,
  path: string,
  key: string,
  body: Record<string, unknown>,
  token = 'alice',
): Promise<T> {
  const r = await h.call<Record<string, T>>('POST', `/network/v2.0/${path}`, {
    token,
    body: { [key]: body },
  });
  assert.equal(r.status, 201, `POST ${path}: ${r.text}`);
  return r.body[key]!;
}

async function publicNet(h: CloudHarness): Promise<Obj> {
  return (await h.call<{ networks: Obj[] }>('GET', '/network/v2.0/networks?router:external=true')).body
    .networks[0]!;
}

/** A tenant network with a subnet and a port, as a cluster would have. */
async function topology(h: CloudHarness, cidr = '10.6.0.0/24') {
  const net = await post(h, 'networks', 'network', { name: 'k8s' });
  const subnet = await post(h, 'subnets', 'subnet', { network_id: net.id, cidr, ip_version: 4, name: 'k8s' });
  const port = await post(h, 'ports', 'port', { network_id: net.id, name: 'node-0' });
  return { net, subnet, port };
}

test('the seeded external network public has a floating-IP pool in 172.24.0.0/20 (room for two thousand clusters)', async () => {
  const h = await startCloud();
  try {
    const pub = await publicNet(h);
    assert.equal(pub.name, 'public');
    assert.equal(pub['router:external'], true);
    const subnet = await h.call<{ subnet: Obj }>(
      'GET',
      `/network/v2.0/subnets/${(pub.subnets as string[])[0]}`,
    );
    assert.equal(subnet.body.subnet.cidr, '172.24.0.0/20');
    assert.deepEqual(subnet.body.subnet.allocation_pools, [{ start: '172.24.0.2', end: '172.24.15.254' }]);
  } finally {
    await h.close();
  }
});

test('a port gets an address from the subnet and the default security group', async () => {
  const h = await startCloud();
  try {
    const { subnet, port } = await topology(h);
    assert.deepEqual(port.fixed_ips, [{ subnet_id: subnet.id, ip_address: '10.6.0.2' }]);
    assert.match(String(port.mac_address), /^fa:16:3e(:[0-9a-f]{2}){3}$/);
    const sgs = await h.call<{ security_groups: Obj[] }>('GET', '/network/v2.0/security-groups?name=default');
    assert.deepEqual(port.security_groups, [sgs.body.security_groups[0]!.id]);
    assert.equal((sgs.body.security_groups[0]!.security_group_rules as unknown[]).length, 4);
    const taken = await h.call('POST', '/network/v2.0/ports', {
      body: { port: { network_id: port.network_id, fixed_ips: [{ ip_address: '10.6.0.2' }] } },
    });
    assert.equal(taken.status, 409);
    assert.equal(
      (taken.body as { NeutronError: { type: string } }).NeutronError.type,
      'IpAddressAlreadyAllocated',
    );
  } finally {
    await h.close();
  }
});

test('bad CIDRs are refused with Neutron 400 bodies', async () => {
  const h = await startCloud();
  try {
    const net = await post(h, 'networks', 'network', { name: 'n' });
    const bad = await h.call('POST', '/network/v2.0/subnets', {
      body: { subnet: { network_id: net.id, cidr: '10.0.0.0/33', ip_version: 4 } },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, {
      NeutronError: {
        type: 'HTTPBadRequest',
        message: "Invalid input for cidr. Reason: '10.0.0.0/33' is not a valid IP subnet.",
        detail: '',
      },
    });
    const hostBits = await h.call<{ NeutronError: { message: string } }>('POST', '/network/v2.0/subnets', {
      body: { subnet: { network_id: net.id, cidr: '10.0.0.1/24', ip_version: 4 } },
    });
    assert.equal(hostBits.status, 400);
    assert.match(hostBits.body.NeutronError.message, /'10.0.0.0\/24' is recommended/);
    await post(h, 'subnets', 'subnet', { network_id: net.id, cidr: '10.0.0.0/24', ip_version: 4 });
    const overlap = await h.call<{ NeutronError: { type: string; message: string } }>(
      'POST',
      '/network/v2.0/subnets',
      {
        body: { subnet: { network_id: net.id, cidr: '10.0.0.128/25', ip_version: 4 } },
      },
    );
    assert.equal(overlap.status, 400);
    assert.equal(overlap.body.NeutronError.type, 'InvalidInput');
    assert.match(overlap.body.NeutronError.message, /overlaps with another subnet/);
    const missing = await h.call('POST', '/network/v2.0/subnets', {
      body: { subnet: { network_id: uuid(), cidr: '10.1.0.0/24', ip_version: 4 } },
    });
    assert.equal(missing.status, 404);
  } finally {
    await h.close();
  }
});

test('deleting a network with ports in use is refused with NetworkInUse (409)', async () => {
  const h = await startCloud();
  try {
    const { net, subnet, port } = await topology(h);
    const r = await h.call('DELETE', `/network/v2.0/networks/${net.id}`);
    assert.equal(r.status, 409);
    assert.deepEqual(r.body, {
      NeutronError: {
        type: 'NetworkInUse',
        message: `Unable to complete operation on network ${net.id}. There are one or more ports still in use on the network.`,
        detail: '',
      },
    });
    const sub = await h.call<{ NeutronError: { type: string } }>(
      'DELETE',
      `/network/v2.0/subnets/${subnet.id}`,
    );
    assert.equal(sub.status, 409);
    assert.equal(sub.body.NeutronError.type, 'SubnetInUse');
    assert.equal((await h.call('DELETE', `/network/v2.0/ports/${port.id}`)).status, 204);
    assert.equal((await h.call('DELETE', `/network/v2.0/networks/${net.id}`)).status, 204);
    assert.equal((await h.call('GET', `/network/v2.0/subnets/${subnet.id}`)).status, 404);
  } finally {
    await h.close();
  }
});

test('deleting a security group in use is refused with SecurityGroupInUse (409)', async () => {
  const h = await startCloud();
  try {
    const net = await post(h, 'networks', 'network', { name: 'n' });
    await post(h, 'subnets', 'subnet', { network_id: net.id, cidr: '10.2.0.0/24', ip_version: 4 });
    const sg = await post(h, 'security-groups', 'security_group', { name: 'k8s-controlplane' });
    assert.equal((sg.security_group_rules as unknown[]).length, 2);
    const rule = await post(h, 'security-group-rules', 'security_group_rule', {
      security_group_id: sg.id,
      direction: 'ingress',
      protocol: 'tcp',
      port_range_min: 6443,
      port_range_max: 6443,
      remote_ip_prefix: '0.0.0.0/0',
    });
    const dup = await h.call<{ NeutronError: { type: string; message: string } }>(
      'POST',
      '/network/v2.0/security-group-rules',
      {
        body: {
          security_group_rule: {
            security_group_id: sg.id,
            direction: 'ingress',
            protocol: 'tcp',
            port_range_min: 6443,
            port_range_max: 6443,
          },
        },
      },
    );
    assert.equal(dup.status, 409);
    assert.equal(dup.body.NeutronError.message, `Security group rule already exists. Rule id is ${rule.id}.`);
    const noProto = await h.call<{ NeutronError: { message: string } }>(
      'POST',
      '/network/v2.0/security-group-rules',
      {
        body: {
          security_group_rule: {
            security_group_id: sg.id,
            direction: 'ingress',
            port_range_min: 22,
            port_range_max: 22,
          },
        },
      },
    );
    assert.equal(noProto.status, 400);
    assert.equal(
      noProto.body.NeutronError.message,
      'Invalid input for operation: Must also specify protocol if port range is given.',
    );
    const port = await post(h, 'ports', 'port', { network_id: net.id, security_groups: [sg.id] });
    const inUse = await h.call('DELETE', `/network/v2.0/security-groups/${sg.id}`);
    assert.equal(inUse.status, 409);
    assert.deepEqual(inUse.body, {
      NeutronError: { type: 'SecurityGroupInUse', message: `Security Group ${sg.id} in use.`, detail: '' },
    });
    // a port that leaves the group (here: its only group) no longer holds it
    const left = await h.call('PUT', `/network/v2.0/ports/${port.id}`, {
      body: { port: { security_groups: [] } },
    });
    assert.equal(left.status, 200);
    const other = await post(h, 'security-groups', 'security_group', { name: 'k8s-worker' });
    await post(h, 'security-group-rules', 'security_group_rule', {
      security_group_id: other.id,
      direction: 'ingress',
      remote_group_id: sg.id,
    });
    const port2 = await post(h, 'ports', 'port', { network_id: net.id, security_groups: [other.id, sg.id] });
    assert.equal((await h.call('DELETE', `/network/v2.0/security-groups/${sg.id}`)).status, 409);
    await h.call('DELETE', `/network/v2.0/ports/${port2.id}`);
    await h.call('DELETE', `/network/v2.0/ports/${port.id}`);
    assert.equal((await h.call('DELETE', `/network/v2.0/security-groups/${sg.id}`)).status, 204);
    // the other group's rule that allowed traffic from the deleted group went with it
    const otherRules = await h.call<{ security_group_rules: { remote_group_id: string | null }[] }>(
      'GET',
      `/network/v2.0/security-group-rules?security_group_id=${other.id}`,
    );
    assert.equal(otherRules.body.security_group_rules.length, 2);
    assert.ok(otherRules.body.security_group_rules.every((x) => x.remote_group_id === null));
    assert.equal((await h.call('GET', `/network/v2.0/security-group-rules/${rule.id}`)).status, 404);
  } finally {
    await h.close();
  }
});

test('a floating IP cannot be associated without a router from the port subnet to the external network', async () => {
  const h = await startCloud();
  try {
    const { subnet, port } = await topology(h);
    const pub = await publicNet(h);
    const fip = await post(h, 'floatingips', 'floatingip', { floating_network_id: pub.id });
    assert.match(String(fip.floating_ip_address), /^172\.24\.([0-9]|1[0-5])\.\d+$/);
    const unreachable = await h.call('PUT', `/network/v2.0/floatingips/${fip.id}`, {
      body: { floatingip: { port_id: port.id } },
    });
    assert.equal(unreachable.status, 404);
    assert.deepEqual(unreachable.body, {
      NeutronError: {
        type: 'ExternalGatewayForFloatingIPNotFound',
        message: `External network ${pub.id} is not reachable from subnet ${subnet.id}.  Therefore, cannot associate Port ${port.id} with a Floating IP.`,
        detail: '',
      },
    });

    const router = await post(h, 'routers', 'router', {
      name: 'r',
      external_gateway_info: { network_id: pub.id },
    });
    const itf = await h.call<{ port_id: string; subnet_id: string }>(
      'PUT',
      `/network/v2.0/routers/${router.id}/add_router_interface`,
      {
        body: { subnet_id: subnet.id },
      },
    );
    assert.equal(itf.status, 200);
    assert.equal(itf.body.subnet_id, subnet.id);
    const ok = await h.call<{ floatingip: Obj }>('PUT', `/network/v2.0/floatingips/${fip.id}`, {
      body: { floatingip: { port_id: port.id } },
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.floatingip.router_id, router.id);
    assert.equal(ok.body.floatingip.fixed_ip_address, '10.6.0.2');

    const second = await post(h, 'floatingips', 'floatingip', { floating_network_id: pub.id });
    const already = await h.call<{ NeutronError: { type: string } }>(
      'PUT',
      `/network/v2.0/floatingips/${second.id}`,
      {
        body: { floatingip: { port_id: port.id } },
      },
    );
    assert.equal(already.status, 409);
    assert.equal(already.body.NeutronError.type, 'FloatingIPPortAlreadyAssociated');

    // the interface is needed by the floating IP; the router cannot go either
    const removeItf = await h.call<{ NeutronError: { type: string } }>(
      'PUT',
      `/network/v2.0/routers/${router.id}/remove_router_interface`,
      {
        body: { subnet_id: subnet.id },
      },
    );
    assert.equal(removeItf.status, 409);
    assert.equal(removeItf.body.NeutronError.type, 'RouterInterfaceInUseByFloatingIP');
    const delRouter = await h.call<{ NeutronError: { type: string } }>(
      'DELETE',
      `/network/v2.0/routers/${router.id}`,
    );
    assert.equal(delRouter.status, 409);
    assert.equal(delRouter.body.NeutronError.type, 'RouterInUse');

    // deleting the port disassociates the floating IP
    await h.call('DELETE', `/network/v2.0/ports/${port.id}`);
    const after = await h.call<{ floatingip: Obj }>('GET', `/network/v2.0/floatingips/${fip.id}`);
    assert.equal(after.body.floatingip.port_id, null);
    assert.equal(after.body.floatingip.status, 'DOWN');
  } finally {
    await h.close();
  }
});

test('network, router and floating IP quotas refuse with OverQuota (409)', async () => {
  const h = await startCloud();
  try {
    const put = await h.call('PUT', `/network/v2.0/quotas/${h.identity.projectA}`, {
      token: 'admin',
      body: { quota: { network: 1, floatingip: 1 } },
    });
    assert.equal(put.status, 200);
    await post(h, 'networks', 'network', { name: 'one' });
    const over = await h.call('POST', '/network/v2.0/networks', { body: { network: { name: 'two' } } });
    assert.equal(over.status, 409);
    assert.deepEqual(over.body, {
      NeutronError: { type: 'OverQuota', message: "Quota exceeded for resources: ['network'].", detail: '' },
    });
    const pub = await publicNet(h);
    await post(h, 'floatingips', 'floatingip', { floating_network_id: pub.id });
    const fip = await h.call<{ NeutronError: { message: string } }>('POST', '/network/v2.0/floatingips', {
      body: { floatingip: { floating_network_id: pub.id } },
    });
    assert.equal(fip.status, 409);
    assert.equal(fip.body.NeutronError.message, "Quota exceeded for resources: ['floatingip'].");
    const details = await h.call<{ quota: Record<string, { limit: number; used: number }> }>(
      'GET',
      `/network/v2.0/quotas/${h.identity.projectA}/details`,
    );
    assert.deepEqual(details.body.quota.network, { limit: 1, used: 1, reserved: 0 });
    // bob's project is not affected
    assert.equal(
      (await h.call('POST', '/network/v2.0/networks', { token: 'bob', body: { network: { name: 'b' } } }))
        .status,
      201,
    );
    assert.equal(
      (await h.call('GET', `/network/v2.0/quotas/${h.identity.projectA}`, { token: 'bob' })).status,
      403,
    );
  } finally {
    await h.close();
  }
});

test('tags can be set on networks and filtered with tags and tags-any', async () => {
  const h = await startCloud();
  try {
    const a = await post(h, 'networks', 'network', { name: 'a' });
    const b = await post(h, 'networks', 'network', { name: 'b' });
    assert.equal(
      (await h.call('PUT', `/network/v2.0/networks/${a.id}/tags`, { body: { tags: ['cluster-x', 'k8s'] } }))
        .status,
      200,
    );
    assert.equal((await h.call('PUT', `/network/v2.0/networks/${b.id}/tags/k8s`)).status, 201);
    const both = await h.call<{ networks: Obj[] }>('GET', '/network/v2.0/networks?tags=cluster-x,k8s');
    assert.deepEqual(
      both.body.networks.map((n) => n.name),
      ['a'],
    );
    const any = await h.call<{ networks: Obj[] }>('GET', '/network/v2.0/networks?tags-any=k8s');
    assert.deepEqual(any.body.networks.map((n) => n.name).sort(), ['a', 'b']);
    const fields = await h.call<{ networks: Obj[] }>(
      'GET',
      '/network/v2.0/networks?name=a&fields=id&fields=name',
    );
    assert.deepEqual(fields.body.networks, [{ id: a.id, name: 'a' }]);
  } finally {
    await h.close();
  }
});

test('tags given in a create request (tag-creation) are stored with the resource; a bad tag creates nothing', async () => {
  const h = await startCloud();
  try {
    const ext = await h.call<{ extension: { alias: string } }>(
      'GET',
      '/network/v2.0/extensions/tag-creation',
    );
    assert.equal(ext.status, 200);
    assert.equal(ext.body.extension.alias, 'tag-creation');
    const tags = ['k8s-cluster-a', 'magnum-cluster-1'];
    const net = await post(h, 'networks', 'network', { name: 'k8s', tags });
    const subnet = await post(h, 'subnets', 'subnet', {
      network_id: net.id,
      cidr: '10.9.0.0/24',
      ip_version: 4,
      tags,
    });
    const port = await post(h, 'ports', 'port', {
      network_id: net.id,
      name: 'node-0',
      tags: [...tags, tags[0]],
    });
    const router = await post(h, 'routers', 'router', { name: 'k8s', tags });
    const sg = await post(h, 'security-groups', 'security_group', { name: 'k8s', tags });
    const fip = await post(h, 'floatingips', 'floatingip', {
      floating_network_id: (await publicNet(h)).id,
      tags,
    });
    for (const o of [net, subnet, port, router, sg, fip]) assert.deepEqual(o.tags, tags);
    // as listed by tag, the way a cleanup finds them
    const ports = await h.call<{ ports: Obj[] }>('GET', `/network/v2.0/ports?tags=${tags.join(',')}`);
    assert.deepEqual(
      ports.body.ports.map((p) => p.id),
      [port.id],
    );

    for (const bad of [['a,b'], [''], ['x'.repeat(256)]]) {
      const r = await h.call<{ NeutronError: { message: string } }>('POST', '/network/v2.0/ports', {
        token: 'alice',
        body: { port: { network_id: net.id, name: 'bad-tag', tags: bad } },
      });
      assert.equal(r.status, 400, r.text);
      assert.match(r.body.NeutronError.message, /tags/);
    }
    const named = await h.call<{ ports: Obj[] }>('GET', '/network/v2.0/ports?name=bad-tag');
    assert.deepEqual(named.body.ports, []);
  } finally {
    await h.close();
  }
});

test('non-admins may not create external or shared networks', async () => {
  const h = await startCloud();
  try {
    const r = await h.call<{ NeutronError: { type: string } }>('POST', '/network/v2.0/networks', {
      body: { network: { name: 'x', 'router:external': true } },
    });
    assert.equal(r.status, 403);
    assert.equal(r.body.NeutronError.type, 'NotAuthorized');
    assert.equal(
      (
        await h.call('POST', '/network/v2.0/networks', {
          token: 'admin',
          body: { network: { name: 'x', shared: true } },
        })
      ).status,
      201,
    );
  } finally {
    await h.close();
  }
});

test('lookups by name, description and network id answer exactly what Neutron filters would: one match, several values, none, and other tenants hidden', async () => {
  const h = await startCloud();
  try {
    const a = await post(h, 'networks', 'network', { name: 'net-a' });
    const b = await post(h, 'networks', 'network', { name: 'net-b' });
    await post(h, 'networks', 'network', { name: 'net-a' }, 'bob');
    const sa = await post(h, 'subnets', 'subnet', {
      network_id: a.id,
      cidr: '10.7.0.0/24',
      ip_version: 4,
      name: 's-a',
    });
    await post(h, 'subnets', 'subnet', { network_id: b.id, cidr: '10.8.0.0/24', ip_version: 4, name: 's-b' });
    const ra = await post(h, 'routers', 'router', { name: 'r-a' });
    await post(h, 'routers', 'router', { name: 'r-b' });
    const names = async (path: string, key: string) =>
      (await h.call<Record<string, Obj[]>>('GET', `/network/v2.0/${path}`)).body[key]!.map(
        (x) => x.name,
      ).sort();

    assert.deepEqual(await names('networks?name=net-a', 'networks'), ['net-a'], "bob's net-a is not alice's");
    assert.deepEqual(await names('networks?name=net-a&name=net-b', 'networks'), ['net-a', 'net-b']);
    assert.deepEqual(await names('networks?name=nope', 'networks'), []);
    assert.deepEqual(await names(`subnets?network_id=${a.id}`, 'subnets'), ['s-a']);
    assert.deepEqual(await names(`subnets?network_id=${a.id}&name=s-b`, 'subnets'), []);
    assert.deepEqual(await names(`subnets?network_id=${a.id}&network_id=${b.id}`, 'subnets'), ['s-a', 's-b']);
    assert.deepEqual(await names('routers?name=r-a', 'routers'), ['r-a']);

    const pub = await publicNet(h);
    await h.call('PUT', `/network/v2.0/routers/${ra.id}`, {
      token: 'alice',
      body: { router: { external_gateway_info: { network_id: pub.id } } },
    });
    await h.call('PUT', `/network/v2.0/routers/${ra.id}/add_router_interface`, {
      token: 'alice',
      body: { subnet_id: sa.id },
    });
    for (const description of ['lb-one', 'lb-two'])
      await post(h, 'floatingips', 'floatingip', { floating_network_id: pub.id, description });
    const fips = async (q: string) =>
      (await h.call<{ floatingips: Obj[] }>('GET', `/network/v2.0/floatingips?${q}`)).body.floatingips
        .map((f) => f.description)
        .sort();
    assert.deepEqual(await fips('description=lb-two'), ['lb-two']);
    assert.deepEqual(await fips('description=lb-one&description=lb-two'), ['lb-one', 'lb-two']);
    assert.deepEqual(await fips('description=none-such'), []);
  } finally {
    await h.close();
  }
});

test('security group rules created in bulk: all of one group, together or not at all', async () => {
  const h = await startCloud();
  try {
    const sg = await post(h, 'security-groups', 'security_group', { name: 'k8s-workers' });
    const other = await post(h, 'security-groups', 'security_group', { name: 'k8s-controlplane' });
    const rulesOf = async (id: string) =>
      (
        await h.call<{ security_group_rules: { id: string; port_range_min: number | null }[] }>(
          'GET',
          `/network/v2.0/security-group-rules?security_group_id=${id}`,
        )
      ).body.security_group_rules;
    const before = (await rulesOf(sg.id)).length;
    const bulk = (body: unknown) =>
      h.call<{
        security_group_rules: { id: string; security_group_id: string; port_range_max: number | null }[];
        NeutronError: { type: string; message: string };
      }>('POST', '/network/v2.0/security-group-rules', { body });
    const rule = (fields: Record<string, unknown>) => ({
      security_group_id: sg.id,
      direction: 'ingress',
      protocol: 'tcp',
      ...fields,
    });

    const made = await bulk({
      security_group_rules: [
        rule({ port_range_min: 30000, port_range_max: 32767, remote_ip_prefix: '0.0.0.0/0' }),
        rule({ port_range_min: 10250, remote_group_id: other.id }),
      ],
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.security_group_rules.length, 2);
    assert.deepEqual(
      made.body.security_group_rules.map((r) => [r.security_group_id, r.port_range_max]),
      [
        [sg.id, 32767],
        [sg.id, 10250],
      ],
    );
    assert.equal((await rulesOf(sg.id)).length, before + 2);

    // each refusal below changes nothing
    const refusals: [unknown, number, string, string][] = [
      [
        {
          security_group_rules: [
            rule({ port_range_min: 22 }),
            { ...rule({ port_range_min: 80 }), security_group_id: other.id },
          ],
        },
        400,
        'BadRequest',
        'Bad security_group_rule request: Only allowed to update rules for one security profile at a time.',
      ],
      [
        {
          security_group_rules: [
            rule({ port_range_min: 22 }),
            rule({ port_range_min: 22, description: 'again' }),
          ],
        },
        409,
        'DuplicateSecurityGroupRuleInPost',
        'Duplicate Security Group Rule in POST.',
      ],
      [
        {
          security_group_rules: [
            rule({ port_range_min: 22 }),
            rule({ port_range_min: 30000, port_range_max: 32767, remote_ip_prefix: '0.0.0.0/0' }),
          ],
        },
        409,
        'SecurityGroupRuleExists',
        `Security group rule already exists. Rule id is ${made.body.security_group_rules[0]!.id}.`,
      ],
      [
        { security_group_rules: [rule({ port_range_min: 22 }), rule({ port_range_min: 70000 })] },
        400,
        'InvalidInput',
        'Invalid input for operation: Invalid value for port 70000.',
      ],
      [
        { security_group_rules: [rule({ port_range_min: 22 }), 'tcp/80'] },
        400,
        'HTTPBadRequest',
        "Invalid input for security_group_rules. Reason: 'tcp/80' is not a dictionary.",
      ],
      [
        { security_group_rules: [] },
        400,
        'HTTPBadRequest',
        "Unable to find 'security_group_rules' in request body",
      ],
    ];
    for (const [body, status, type, message] of refusals) {
      const r = await bulk(body);
      assert.equal(r.status, status, JSON.stringify(body));
      assert.equal(r.body.NeutronError.type, type);
      assert.equal(r.body.NeutronError.message, message);
    }
    assert.equal((await rulesOf(sg.id)).length, before + 2);
    assert.equal((await rulesOf(other.id)).length, 2);

    // the quota counts every rule of the request
    const used = (await rulesOf(sg.id)).length + (await rulesOf(other.id)).length;
    const defaults = await h.call<{ security_groups: { security_group_rules: unknown[] }[] }>(
      'GET',
      '/network/v2.0/security-groups?name=default',
    );
    const inDefault = defaults.body.security_groups.reduce((n, g) => n + g.security_group_rules.length, 0);
    const put = await h.call('PUT', `/network/v2.0/quotas/${h.identity.projectA}`, {
      token: 'admin',
      body: { quota: { security_group_rule: used + inDefault + 1 } },
    });
    assert.equal(put.status, 200);
    const over = await bulk({
      security_group_rules: [rule({ port_range_min: 22 }), rule({ port_range_min: 23 })],
    });
    assert.equal(over.status, 409);
    assert.equal(over.body.NeutronError.message, "Quota exceeded for resources: ['security_group_rule'].");
    assert.equal((await rulesOf(sg.id)).length, before + 2);
    const one = await bulk({ security_group_rules: [rule({ port_range_min: 22 })] });
    assert.equal(one.status, 201);
  } finally {
    await h.close();
  }
});
