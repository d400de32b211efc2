import { test } from 'node:test';
import assert from 'node:assert/strict';
import { templateCreateBody } from '../../src/cli/commands/cluster-template.ts';
import { clusterCreateBody, resizeBody } from '../../src/cli/commands/cluster.ts';
import { nodeGroupCreateBody } from '../../src/cli/commands/nodegroup.ts';
import { UsageError } from '../../src/cli/coe-errors.ts';
import { parseNextLink } from '../../src/cli/magnum-client.ts';

const templateDefaults = {
  coe: 'kubernetes',
  image: 'fedora-coreos-38',
  externalNetwork: 'public',
  dnsNameserver: '8.8.8.8',
  flavor: 'm1.medium',
  dockerStorageDriver: 'overlay2',
  serverType: 'vm',
};

test('template create sends every key like the openstack client, unset ones as null', () => {
  const body = templateCreateBody('k8s-template', {
    ...templateDefaults,
    keypair: 'my-keypair',
    networkDriver: 'calico',
    masterFlavor: 'm1.medium',
    dockerVolumeSize: 10,
    labels: ['kube_tag=v1.27.3,container_runtime=containerd'],
    masterLbEnabled: true,
  });
  assert.deepEqual(body, {
    name: 'k8s-template',
    image_id: 'fedora-coreos-38',
    keypair_id: 'my-keypair',
    external_network_id: 'public',
    coe: 'kubernetes',
    fixed_network: null,
    fixed_subnet: null,
    network_driver: 'calico',
    volume_driver: null,
    dns_nameserver: '8.8.8.8',
    flavor_id: 'm1.medium',
    master_flavor_id: 'm1.medium',
    docker_volume_size: 10,
    docker_storage_driver: 'overlay2',
    http_proxy: null,
    https_proxy: null,
    no_proxy: null,
    labels: { kube_tag: 'v1.27.3', container_runtime: 'containerd' },
    tls_disabled: false,
    public: false,
    registry_enabled: false,
    server_type: 'vm',
    master_lb_enabled: true,
  });
});

test('template create sends hidden, tags and floating_ip_enabled only when asked', () => {
  const body = templateCreateBody('t', {
    ...templateDefaults,
    hidden: true,
    tags: ['a', 'b,a'],
    floatingIpDisabled: true,
  });
  assert.equal(body.hidden, true);
  assert.equal(body.tags, 'a,b');
  assert.equal(body.floating_ip_enabled, false);
  const plain = templateCreateBody('t', templateDefaults);
  assert.ok(!('hidden' in plain) && !('tags' in plain) && !('floating_ip_enabled' in plain));
  assert.throws(
    () => templateCreateBody('t', { ...templateDefaults, floatingIpEnabled: true, floatingIpDisabled: true }),
    UsageError,
  );
});

const clusterDefaults = { clusterTemplate: 'k8s-template', masterCount: 1, nodeCount: 1, timeout: 60 };

test('cluster create sends the user guide example exactly like the openstack client', () => {
  const body = clusterCreateBody('production-kubernetes', {
    ...clusterDefaults,
    masterCount: 3,
    masterFlavor: 'm1.medium',
    nodeCount: 3,
    flavor: 'm1.medium',
    keypair: 'my-keypair',
  });
  assert.deepEqual(body, {
    cluster_template_id: 'k8s-template',
    create_timeout: 60,
    discovery_url: null,
    keypair: 'my-keypair',
    master_count: 3,
    name: 'production-kubernetes',
    node_count: 3,
    master_flavor_id: 'm1.medium',
    flavor_id: 'm1.medium',
  });
});

test('cluster create sends labels, merge_labels and master_lb_enabled only when given', () => {
  const body = clusterCreateBody('c', {
    ...clusterDefaults,
    labels: ['a=1', 'b=2'],
    mergeLabels: true,
    masterLbEnabled: true,
  });
  assert.deepEqual(body.labels, { a: '1', b: '2' });
  assert.equal(body.merge_labels, true);
  assert.equal(body.master_lb_enabled, true, '--master-lb-enabled means true (openstack 4.0.0 sends false)');
  const plain = clusterCreateBody('c', clusterDefaults);
  for (const k of [
    'labels',
    'merge_labels',
    'master_lb_enabled',
    'floating_ip_enabled',
    'flavor_id',
    'docker_volume_size',
  ]) {
    assert.ok(!(k in plain), `${k} is not sent unless given`);
  }
});

test('cluster create refuses several masters without a load balancer before any request', () => {
  assert.throws(
    () => clusterCreateBody('c', { ...clusterDefaults, masterCount: 3, masterLbDisabled: true }),
    /Master node count can only be one/,
  );
  assert.equal(
    clusterCreateBody('c', { ...clusterDefaults, masterLbDisabled: true }).master_lb_enabled,
    false,
  );
});

test('resize sends nodegroup and nodes_to_remove only when given', () => {
  assert.deepEqual(resizeBody(7, { nodegroup: 'worker-group2' }), {
    node_count: 7,
    nodegroup: 'worker-group2',
  });
  assert.deepEqual(resizeBody(2, { nodesToRemove: ['a', 'b'] }), {
    node_count: 2,
    nodes_to_remove: ['a', 'b'],
  });
  assert.deepEqual(resizeBody(2, {}), { node_count: 2 });
});

test('nodegroup create always sends name, counts and role, the rest only when given', () => {
  assert.deepEqual(nodeGroupCreateBody('worker-group2', { nodeCount: 5, minNodes: 0, role: 'worker' }), {
    name: 'worker-group2',
    node_count: 5,
    max_node_count: null,
    min_node_count: 0,
    role: 'worker',
  });
  assert.deepEqual(
    nodeGroupCreateBody('worker-group-az2', {
      nodeCount: 2,
      minNodes: 0,
      role: 'worker',
      labels: ['availability_zone=AZ-2'],
      flavor: 'm1.large',
    }),
    {
      name: 'worker-group-az2',
      node_count: 2,
      max_node_count: null,
      min_node_count: 0,
      role: 'worker',
      labels: { availability_zone: 'AZ-2' },
      flavor_id: 'm1.large',
    },
  );
});

test('next links lose scheme, host and the /v1 prefix', () => {
  assert.deepEqual(parseNextLink('http://127.0.0.1:9511/v1/clusters?limit=2&marker=abc&sort_key=name'), {
    path: '/clusters',
    query: { limit: '2', marker: 'abc', sort_key: 'name' },
  });
  assert.deepEqual(parseNextLink('https://cloud.example/magnum/v1/clusters/u1/nodegroups?limit=1&marker=m'), {
    path: '/clusters/u1/nodegroups',
    query: { limit: '1', marker: 'm' },
  });
});
