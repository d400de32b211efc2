import { isNotFound, type CloudClients } from '../../cloud/index.ts';
import {
  CapiConditions,
  CapiFinalizers,
  CapiLabels,
  CapiTypes,
  type OpenStackClusterObject,
} from '../../domain/index.ts';
import { cloudErrorMessage } from '../common/cloud-errors.ts';
import { buildConditions, falseCondition } from '../common/conditions.ts';
import { pollDelay, type Env } from '../common/env.ts';
import type { ReconcileContext, ReconcileResult } from '../common/runtime-types.ts';
import { iso, removeFinalizer, writeStatus } from '../common/writes.ts';
import { deleteLoadBalancer } from './osc-load-balancer.ts';
import { oscNames } from './osc-network.ts';
import { deleteSecurityGroups } from './osc-security-groups.ts';

/**
 * Deleting a cluster's infrastructure, in the OpenStack provider's order: wait until every
 * machine is gone, delete the API floating IP and load balancer (cascade) and wait, remove the
 * router interface and the router, delete leftover ports and the network, then the security
 * groups. Everything is looked up by recorded id and by deterministic name, so a status lost
 * in a crash does not leak anything; "not found" counts as deleted.
 */
export async function reconcileOscDelete(
  env: Env,
  ctx: ReconcileContext,
  osc: OpenStackClusterObject,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  if (!osc.metadata.finalizers.includes(CapiFinalizers.openStackCluster)) return;
  const say = async (message: string) => {
    await writeStatus(store, osc, {
      ...osc.status,
      conditions: buildConditions(
        osc.status.conditions,
        [falseCondition(CapiConditions.Deleting, 'Deleting', message)],
        iso(env.deps.clock.now()),
        (osc.status.conditions ?? []).map((c) => c.type).filter((t) => t !== CapiConditions.Deleting),
      ),
    });
  };
  const cluster = osc.metadata.labels[CapiLabels.clusterName];
  if (cluster) {
    const machines = await env.cache.listByCluster(CapiTypes.Machine, osc.metadata.namespace, cluster);
    if (machines.length > 0) {
      await say(`waiting for ${machines.length} machine(s) to be deleted`);
      return { requeueAfterMs: 5_000 };
    }
  }
  const cloud = await env.deps.cloud(osc.metadata.namespace);
  try {
    const lb = await deleteLoadBalancer(cloud, osc);
    if (!lb.gone) {
      await say(lb.waiting ?? 'deleting the API load balancer');
      return {
        requeueAfterMs: pollDelay(
          Date.parse(osc.metadata.deletionTimestamp ?? ''),
          env.deps.clock.now(),
          env.settings.cloudPollMs,
        ),
      };
    }
    await deleteNetworking(cloud, osc);
    await deleteSecurityGroups(cloud, osc);
  } catch (err) {
    await say(`deleting cluster infrastructure: ${cloudErrorMessage(err)}`);
    throw err;
  }
  await removeFinalizer(store, osc, CapiFinalizers.openStackCluster);
}

async function ignoreNotFound(fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

async function deleteNetworking(cloud: CloudClients, osc: OpenStackClusterObject): Promise<void> {
  if (osc.spec.network) return; // not ours
  const n = oscNames(osc);
  const net = cloud.network;
  const routers = new Set<string>();
  if (osc.status.router?.id) routers.add(osc.status.router.id);
  for (const r of await net.listRouters({ name: n.router })) routers.add(r.id);
  const networks = new Set<string>();
  if (osc.status.network?.id) networks.add(osc.status.network.id);
  for (const nw of await net.listNetworks({ name: n.network })) networks.add(nw.id);
  const subnets = new Set<string>();
  for (const s of osc.status.network?.subnets ?? []) subnets.add(s.id);
  for (const id of networks) for (const s of await net.listSubnets({ networkId: id })) subnets.add(s.id);

  for (const r of routers) {
    for (const s of subnets) {
      try {
        await net.removeRouterInterface(r, { subnetId: s });
      } catch (err) {
        // Not attached (or already gone): nothing to remove.
        if (
          !isNotFound(err) &&
          !(err instanceof Error && /not.*(found|attached)|no interface/i.test(err.message))
        )
          throw err;
      }
    }
    await ignoreNotFound(() => net.deleteRouter(r));
  }
  for (const id of networks) {
    // Ports a half-finished machine or load balancer left on the network.
    for (const p of await net.listPorts({ networkId: id })) {
      if (p.deviceOwner === 'network:dhcp') continue;
      await ignoreNotFound(() => net.deletePort(p.id));
    }
    await ignoreNotFound(() => net.deleteNetwork(id));
  }
}
