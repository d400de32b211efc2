import { isNotFound, type CloudClients } from '../../cloud/index.ts';
import type { OpenStackClusterObject, OpenStackClusterStatus } from '../../domain/index.ts';
import { TerminalError } from '../common/runtime-types.ts';

/**
 * The cluster network, subnet and router to the external network, get-or-create by
 * deterministic name (and recorded in status as soon as each exists), as the OpenStack
 * provider does it.
 */

/** Deterministic names of a cluster's network resources. */
export function oscNames(osc: OpenStackClusterObject) {
  const prefix = `k8s-clusterapi-cluster-${osc.metadata.namespace}-${osc.metadata.name}`;
  return {
    prefix,
    network: prefix,
    subnet: prefix,
    router: prefix,
    loadBalancer: `${prefix}-kubeapi`,
    controlPlaneSecurityGroup: `k8s-cluster-${osc.metadata.namespace}-${osc.metadata.name}-secgroup-controlplane`,
    workerSecurityGroup: `k8s-cluster-${osc.metadata.namespace}-${osc.metadata.name}-secgroup-worker`,
    /** Tag on every taggable resource, so leftovers can be found by tag. */
    tag: `k8s-cluster-${osc.metadata.name}`,
  };
}

/** Status writer: persists a status change at once (new resource ids are never kept only in memory). */
export type RecordStatus = (patch: Partial<OpenStackClusterStatus>) => Promise<void>;

function single<T extends { id: string }>(items: T[], what: string): T | undefined {
  if (items.length > 1)
    throw new Error(`more than one ${what} matches: ${items.map((i) => i.id).join(', ')}`);
  return items[0];
}

/** Resolve the external network (recorded in status). */
export async function reconcileExternalNetwork(
  cloud: CloudClients,
  osc: OpenStackClusterObject,
  record: RecordStatus,
): Promise<string> {
  if (osc.status.externalNetwork?.id) return osc.status.externalNetwork.id;
  const ref = osc.spec.externalNetwork;
  let net;
  if (ref?.id) net = await cloud.network.getNetwork(ref.id);
  else if (ref?.filter?.name) {
    const found = await cloud.network.findNetwork(ref.filter.name);
    if (found === 'ambiguous')
      throw new TerminalError(`more than one network is named ${ref.filter.name}`, 'InvalidSpec');
    net = found;
  } else {
    const ext = await cloud.network.listExternalNetworks();
    if (ext.length > 1)
      throw new TerminalError(
        `more than one external network exists (${ext.map((n) => n.name).join(', ')}); name one in spec.externalNetwork`,
        'InvalidSpec',
      );
    net = ext[0];
  }
  if (!net)
    throw new TerminalError(
      `external network ${ref?.id ?? ref?.filter?.name ?? ''} not found`,
      'InvalidSpec',
    );
  if (!net.external)
    throw new TerminalError(`network ${net.name} is not external (router:external is false)`, 'InvalidSpec');
  await record({ externalNetwork: { id: net.id, name: net.name } });
  return net.id;
}

/** Network and subnet (managed, or existing ones from the spec). */
export async function reconcileNetwork(
  cloud: CloudClients,
  osc: OpenStackClusterObject,
  tags: string[],
  record: RecordStatus,
  fresh: boolean,
): Promise<{ networkId: string; subnetId: string; cidr: string }> {
  const n = oscNames(osc);
  const net = cloud.network;
  if (osc.spec.network) {
    const ref = osc.spec.network;
    const found = ref.id ? await net.getNetwork(ref.id) : await net.findNetwork(ref.filter?.name ?? '');
    if (!found || found === 'ambiguous')
      throw new TerminalError(
        `network ${ref.id ?? ref.filter?.name ?? ''} not found or ambiguous`,
        'InvalidSpec',
      );
    const sref = osc.spec.subnets?.[0];
    const subnets = sref?.id
      ? [await net.getSubnet(sref.id)]
      : await net.listSubnets({
          networkId: found.id,
          ...(sref?.filter?.name ? { name: sref.filter.name } : {}),
        });
    const subnet = subnets[0];
    if (!subnet) throw new TerminalError(`network ${found.name} has no subnet`, 'InvalidSpec');
    await record({
      network: {
        id: found.id,
        name: found.name,
        subnets: [{ id: subnet.id, name: subnet.name, cidr: subnet.cidr }],
      },
    });
    return { networkId: found.id, subnetId: subnet.id, cidr: subnet.cidr };
  }
  const managed = osc.spec.managedSubnets?.[0];
  if (!managed) throw new TerminalError('neither spec.network nor spec.managedSubnets is set', 'InvalidSpec');

  let networkId = osc.status.network?.id;
  if (networkId) {
    try {
      await net.getNetwork(networkId);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      networkId = undefined;
    }
  }
  // a network made by this pass has no subnet yet: nothing to look for
  let madeNetwork = false;
  if (!networkId) {
    const existing = fresh
      ? undefined
      : single(await net.listNetworks({ name: n.network }), `network named ${n.network}`);
    madeNetwork = !existing;
    networkId =
      existing?.id ??
      (
        await net.createNetwork({
          name: n.network,
          description: `Created by Magnetar for cluster ${osc.metadata.name}`,
          tags,
        })
      ).id;
    await record({ network: { id: networkId, name: n.network, tags } });
  }
  let subnet = osc.status.network?.subnets?.[0];
  if (!subnet) {
    const existing = madeNetwork
      ? undefined
      : single(await net.listSubnets({ name: n.subnet, networkId }), `subnet named ${n.subnet}`);
    const created =
      existing ??
      (await net.createSubnet({
        networkId,
        name: n.subnet,
        cidr: managed.cidr,
        ...(managed.dnsNameservers ? { dnsNameservers: managed.dnsNameservers } : {}),
        description: `Created by Magnetar for cluster ${osc.metadata.name}`,
        tags,
      }));
    subnet = { id: created.id, name: created.name, cidr: created.cidr };
    await record({ network: { id: networkId, name: n.network, tags, subnets: [subnet] } });
  }
  return { networkId, subnetId: subnet.id, cidr: subnet.cidr };
}

/** Router with its gateway on the external network and an interface on the cluster subnet. */
export async function reconcileRouter(
  cloud: CloudClients,
  osc: OpenStackClusterObject,
  externalNetworkId: string,
  subnetId: string,
  tags: string[],
  record: RecordStatus,
  fresh: boolean,
): Promise<void> {
  if (osc.spec.network) return; // existing network: its router is the user's business
  const n = oscNames(osc);
  const net = cloud.network;
  let router = osc.status.router;
  if (router?.id) {
    try {
      await net.getRouter(router.id);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      router = undefined;
    }
  }
  // a router made by this pass has no interface yet: nothing to look for
  let madeRouter = false;
  if (!router?.id) {
    const existing = fresh
      ? undefined
      : single(await net.listRouters({ name: n.router }), `router named ${n.router}`);
    madeRouter = !existing;
    const created =
      existing ??
      (await net.createRouter({
        name: n.router,
        externalNetworkId,
        description: `Created by Magnetar for cluster ${osc.metadata.name}`,
        tags,
      }));
    router = { id: created.id, name: created.name, interfaceAdded: false };
    await record({ router });
  }
  if (!router.interfaceAdded) {
    const ports = madeRouter
      ? []
      : await net.listPorts({ deviceId: router.id, networkId: osc.status.network?.id ?? '' });
    if (!ports.some((p) => p.fixedIps.some((ip) => ip.subnetId === subnetId))) {
      await net.addRouterInterface(router.id, { subnetId });
    }
    await record({ router: { ...router, interfaceAdded: true } });
  }
}
