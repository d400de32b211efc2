import { isNotFound, type CloudClients } from '../../cloud/index.ts';
import type { OpenStackClusterObject, OpenStackLoadBalancerStatus } from '../../domain/index.ts';
import { TerminalError } from '../common/runtime-types.ts';
import { oscNames, type RecordStatus } from './osc-network.ts';

/**
 * The control-plane API load balancer — always, even for one master — with its floating IP,
 * listener, pool and health monitor, each get-or-create by deterministic name and recorded in
 * status at once (the floating IP before it is associated, so a failed association never
 * allocates a second one). Octavia refuses changes while the load balancer is PENDING_*: the
 * controller waits for ACTIVE between steps.
 */

/** Outcome of a step: done, or wait (with what the user sees). */
export type LbProgress = { done: true; host: string } | { done: false; waiting: string };

export async function reconcileLoadBalancer(
  cloud: CloudClients,
  osc: OpenStackClusterObject,
  ids: { subnetId: string; externalNetworkId: string },
  tags: string[],
  record: RecordStatus,
  fresh: boolean,
): Promise<LbProgress> {
  const n = oscNames(osc);
  const lbApi = cloud.loadBalancer;
  const port = osc.spec.apiServerPort ?? 6443;
  let st: OpenStackLoadBalancerStatus = osc.status.apiServerLoadBalancer ?? { name: n.loadBalancer, id: '' };
  const save = async (patch: Partial<OpenStackLoadBalancerStatus>) => {
    st = { ...st, ...patch };
    await record({ apiServerLoadBalancer: st });
  };

  // The load balancer itself.
  let lb;
  if (st.id) {
    try {
      lb = await lbApi.getLoadBalancer(st.id);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  if (!lb) {
    if (!fresh) lb = (await lbApi.listLoadBalancers({ name: n.loadBalancer }))[0];
    lb ??= await lbApi.createLoadBalancer({
      name: n.loadBalancer,
      vipSubnetId: ids.subnetId,
      description: `Kubernetes API of cluster ${osc.metadata.name} (Magnetar)`,
      tags,
      ...(osc.spec.apiServerLoadBalancer?.provider
        ? { provider: osc.spec.apiServerLoadBalancer.provider }
        : {}),
      ...(osc.spec.apiServerLoadBalancer?.availabilityZone
        ? { availabilityZone: osc.spec.apiServerLoadBalancer.availabilityZone }
        : {}),
    });
    await save({
      id: lb.id,
      name: n.loadBalancer,
      internalIP: lb.vipAddress,
      provisioningStatus: lb.provisioningStatus,
      tags,
    });
  }
  if (lb.provisioningStatus === 'ERROR') {
    throw new TerminalError(`load balancer ${n.loadBalancer} went to ERROR`, 'LoadBalancerError');
  }
  if (st.provisioningStatus !== lb.provisioningStatus || st.internalIP !== lb.vipAddress) {
    await save({ provisioningStatus: lb.provisioningStatus, internalIP: lb.vipAddress });
  }
  if (lb.provisioningStatus !== 'ACTIVE')
    return { done: false, waiting: `waiting for load balancer ${n.loadBalancer} (${lb.provisioningStatus})` };

  // Floating IP: allocated and recorded first, associated after.
  if (!lb.vipAddress)
    return { done: false, waiting: `waiting for load balancer ${n.loadBalancer} to get its VIP address` };
  let host: string = lb.vipAddress;
  if (!osc.spec.disableAPIServerFloatingIP) {
    let fip;
    if (st.floatingIPID) {
      try {
        fip = await cloud.network.getFloatingIp(st.floatingIPID);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    if (!fip) {
      fip = (await cloud.network.listFloatingIps({ description: n.loadBalancer }))[0];
      fip ??= await cloud.network.createFloatingIp({
        floatingNetworkId: ids.externalNetworkId,
        description: n.loadBalancer,
        tags,
        ...(osc.spec.apiServerFloatingIP ? { floatingIpAddress: osc.spec.apiServerFloatingIP } : {}),
      });
      await save({ floatingIPID: fip.id, ip: fip.floatingIpAddress });
    }
    if (!lb.vipPortId)
      return { done: false, waiting: `waiting for load balancer ${n.loadBalancer} to get its VIP port` };
    if (fip.portId !== lb.vipPortId) {
      fip = await cloud.network.associateFloatingIp(fip.id, lb.vipPortId);
    }
    if (st.ip !== fip.floatingIpAddress) await save({ ip: fip.floatingIpAddress });
    host = fip.floatingIpAddress;
  } else if (st.ip !== lb.vipAddress) {
    await save({ ip: lb.vipAddress });
  }

  // Listener, pool, health monitor — one at a time, waiting for ACTIVE after each.
  const lbId = lb.id;
  const busy = async (what: string): Promise<LbProgress | undefined> => {
    const now = await lbApi.getLoadBalancer(lbId);
    if (now.provisioningStatus === 'ACTIVE') return undefined;
    return {
      done: false,
      waiting: `waiting for load balancer ${n.loadBalancer} (${now.provisioningStatus} after creating the ${what})`,
    };
  };
  if (!st.listenerID) {
    const existing = (await lbApi.listListeners({ loadBalancerId: lb.id })).find(
      (l) => l.name === n.loadBalancer,
    );
    const listener =
      existing ??
      (await lbApi.createListener({
        loadBalancerId: lb.id,
        name: n.loadBalancer,
        protocol: 'TCP',
        protocolPort: port,
        ...(osc.spec.apiServerLoadBalancer?.allowedCIDRs
          ? { allowedCidrs: osc.spec.apiServerLoadBalancer.allowedCIDRs }
          : {}),
      }));
    await save({ listenerID: listener.id });
    const wait = await busy('listener');
    if (wait) return wait;
  }
  if (!st.poolID) {
    const existing = (await lbApi.listPools({ loadBalancerId: lb.id })).find(
      (p) => p.name === n.loadBalancer,
    );
    const pool =
      existing ??
      (await lbApi.createPool({
        listenerId: st.listenerID!,
        name: n.loadBalancer,
        protocol: 'TCP',
        lbAlgorithm: 'ROUND_ROBIN',
      }));
    await save({ poolID: pool.id });
    const wait = await busy('pool');
    if (wait) return wait;
  }
  if (!st.monitorID) {
    const m = osc.spec.apiServerLoadBalancer?.monitor;
    const poolId = st.poolID!;
    const existing = (await lbApi.listHealthMonitors({ poolId })).find((h) => h.name === n.loadBalancer);
    const monitor =
      existing ??
      (await lbApi.createHealthMonitor({
        poolId,
        name: n.loadBalancer,
        type: 'TCP',
        delay: m?.delay ?? 10,
        timeout: m?.timeout ?? 5,
        maxRetries: m?.maxRetries ?? 5,
        maxRetriesDown: m?.maxRetriesDown ?? 3,
      }));
    await save({ monitorID: monitor.id });
    const wait = await busy('health monitor');
    if (wait) return wait;
  }
  return { done: true, host };
}

/**
 * Delete the API load balancer (cascade: listener, pool, members, monitor) and its floating
 * IP. Returns false while Octavia is still busy with it.
 */
export async function deleteLoadBalancer(
  cloud: CloudClients,
  osc: OpenStackClusterObject,
): Promise<{ gone: boolean; waiting?: string }> {
  const n = oscNames(osc);
  const st = osc.status.apiServerLoadBalancer;
  const fipIds = new Set<string>();
  if (st?.floatingIPID) fipIds.add(st.floatingIPID);
  for (const f of await cloud.network.listFloatingIps({ description: n.loadBalancer })) fipIds.add(f.id);
  for (const id of fipIds) {
    try {
      await cloud.network.deleteFloatingIp(id);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  const lbs = new Map<string, string>();
  if (st?.id) {
    try {
      const lb = await cloud.loadBalancer.getLoadBalancer(st.id);
      lbs.set(lb.id, lb.provisioningStatus);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  for (const lb of await cloud.loadBalancer.listLoadBalancers({ name: n.loadBalancer }))
    lbs.set(lb.id, lb.provisioningStatus);
  for (const [id, status] of lbs) {
    if (status.startsWith('PENDING'))
      return { gone: false, waiting: `waiting for load balancer ${n.loadBalancer} (${status})` };
    try {
      await cloud.loadBalancer.deleteLoadBalancer(id, { cascade: true });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return lbs.size === 0
    ? { gone: true }
    : { gone: false, waiting: `waiting for load balancer ${n.loadBalancer} to be deleted` };
}
