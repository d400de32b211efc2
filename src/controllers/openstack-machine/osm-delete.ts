import { isNotFound, type Server } from '../../cloud/index.ts';
import {
  CapiConditions,
  CapiFinalizers,
  CapiLabels,
  type CapiClusterObject,
  type MachineObject,
  type OpenStackClusterObject,
  type OpenStackMachineObject,
} from '../../domain/index.ts';
import { cloudErrorMessage } from '../common/cloud-errors.ts';
import { buildConditions, falseCondition } from '../common/conditions.ts';
import { pollDelay, type Env } from '../common/env.ts';
import type { ReconcileContext, ReconcileResult } from '../common/runtime-types.ts';
import { iso, removeFinalizer, writeStatus } from '../common/writes.ts';
import { removeMember } from './osm-member.ts';
import { portName, rootVolumeName } from './osm-resources.ts';

/**
 * Deleting a machine's infrastructure: leave the API load balancer (control plane), delete the
 * server and wait until Nova no longer knows it, then delete its ports and boot volume — found
 * by recorded id and by deterministic name, so a crash between creating and recording leaks
 * nothing. "Not found" counts as deleted.
 *
 * A machine whose whole cluster is being deleted does not leave the load balancer: the cluster's
 * infrastructure deletes it with its pool and members (cascade) once every machine is gone.
 * Leaving one by one would cost each control-plane machine a pool listing, a status check and a
 * member delete, and they would queue behind each other, since Octavia takes one change at a time.
 */
export async function reconcileOsmDelete(
  env: Env,
  ctx: ReconcileContext,
  osm: OpenStackMachineObject,
  machine: MachineObject | undefined,
  cluster: CapiClusterObject | undefined,
  osc: OpenStackClusterObject | undefined,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  if (!osm.metadata.finalizers.includes(CapiFinalizers.openStackMachine)) return;
  const say = async (message: string) => {
    await writeStatus(store, osm, {
      ...osm.status,
      conditions: buildConditions(
        osm.status.conditions,
        [falseCondition(CapiConditions.Deleting, 'Deleting', message)],
        iso(env.deps.clock.now()),
        (osm.status.conditions ?? []).map((c) => c.type).filter((t) => t !== CapiConditions.Deleting),
      ),
    });
  };
  const cloud = await env.deps.cloud(osm.metadata.namespace);
  try {
    const clusterGoing = cluster?.metadata.deletionTimestamp !== undefined;
    if (
      !clusterGoing &&
      (!machine ||
        CapiLabels.controlPlane in machine.metadata.labels ||
        osm.status.resources?.loadBalancerMemberID)
    ) {
      const left = await removeMember(cloud, osm, osc);
      if (!left.done) {
        await say(left.waiting ?? 'leaving the API load balancer');
        return { requeueAfterMs: env.settings.cloudPollMs };
      }
    }
    // The recorded server first; once Nova no longer knows it (or none was recorded), one lookup
    // by name finds a server made before its id could be recorded.
    let remaining = 0;
    const deleting = async (s: Server) => {
      try {
        if (s.status !== 'DELETED' && s.taskState !== 'deleting') await cloud.compute.deleteServer(s.id);
        remaining++;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    };
    if (osm.status.instanceID) {
      let recorded: Server | undefined;
      try {
        recorded = await cloud.compute.getServer(osm.status.instanceID);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      if (recorded) await deleting(recorded);
    }
    if (remaining === 0)
      for (const s of await cloud.compute.listServers({ name: osm.metadata.name })) await deleting(s);
    if (remaining > 0) {
      await say(`waiting for server ${osm.metadata.name} to be deleted`);
      return {
        requeueAfterMs: pollDelay(
          Date.parse(osm.metadata.deletionTimestamp ?? ''),
          env.deps.clock.now(),
          env.settings.cloudPollMs,
        ),
      };
    }
    const ports = new Set<string>();
    for (const p of osm.status.resources?.ports ?? []) ports.add(p.id);
    const networkId = osm.status.resolved?.networkID ?? osc?.status.network?.id;
    for (const p of await cloud.network.listPorts({
      name: portName(osm),
      ...(networkId ? { networkId } : {}),
    }))
      ports.add(p.id);
    for (const id of ports) {
      try {
        await cloud.network.deletePort(id);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    const volumes = new Set<string>();
    if (osm.status.resources?.volumeID) volumes.add(osm.status.resources.volumeID);
    if (osm.spec.rootVolume)
      for (const v of await cloud.volume.listVolumes({ name: rootVolumeName(osm) })) volumes.add(v.id);
    for (const id of volumes) {
      try {
        await cloud.volume.deleteVolume(id);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  } catch (err) {
    await say(`deleting server ${osm.metadata.name}: ${cloudErrorMessage(err)}`);
    throw err;
  }
  await removeFinalizer(store, osm, CapiFinalizers.openStackMachine);
}
