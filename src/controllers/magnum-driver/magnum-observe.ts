import {
  CapiConditions,
  CapiLabels,
  CapiReasons,
  CapiTypes,
  isConditionTrue,
  type KubeadmControlPlaneObject,
  type MachineDeploymentObject,
  type MachineHealthCheckObject,
  type MachineObject,
  type NodeGroupObject,
} from '../../domain/index.ts';
import type { Env } from '../common/env.ts';
import type { MhcStatus } from '../machine-health-check/mhc-controller.ts';
import { dnsLabel, isMaster, type MagnumNames } from './magnum-names.ts';
import type { DesiredCluster } from './magnum-render.ts';
import type { GroupObservation } from './magnum-status.ts';

/** What the driver saw of one Magnum cluster's Cluster API objects. */
export interface ClusterView {
  kcp?: KubeadmControlPlaneObject;
  mds: Map<string, MachineDeploymentObject>;
  machines: MachineObject[];
  healthChecks: MachineHealthCheckObject[];
}

/** Read the cluster's control plane, deployments, machines and health checks (from the cache). */
export async function readClusterView(env: Env, namespace: string, names: MagnumNames): Promise<ClusterView> {
  const kcps = await env.cache.listByCluster<KubeadmControlPlaneObject>(
    CapiTypes.KubeadmControlPlane,
    namespace,
    names.capi,
  );
  const mds = await env.cache.listByCluster<MachineDeploymentObject>(
    CapiTypes.MachineDeployment,
    namespace,
    names.capi,
  );
  const machines = await env.cache.listByCluster<MachineObject>(CapiTypes.Machine, namespace, names.capi);
  const healthChecks = await env.cache.listByCluster<MachineHealthCheckObject>(
    CapiTypes.MachineHealthCheck,
    namespace,
    names.capi,
  );
  const kcp = kcps.find((k) => k.metadata.name === names.controlPlane);
  return {
    ...(kcp ? { kcp } : {}),
    mds: new Map(mds.map((md) => [md.metadata.name, md])),
    machines,
    healthChecks,
  };
}

/** Machines of a node group. */
export function groupMachines(view: ClusterView, ng: NodeGroupObject): MachineObject[] {
  if (isMaster(ng)) return view.machines.filter((m) => CapiLabels.controlPlane in m.metadata.labels);
  const label = dnsLabel(ng.spec.name);
  return view.machines.filter(
    (m) =>
      !(CapiLabels.controlPlane in m.metadata.labels) && m.metadata.labels[CapiLabels.nodeGroup] === label,
  );
}

/**
 * Server errors (e.g. "No valid host was found") of one node group since `sinceIso`: the ones its
 * health check already remediated plus machines in that state now. Undefined while within
 * `retries`, else the latest message.
 */
export function exhaustedServerErrors(
  checks: readonly MachineHealthCheckObject[],
  machines: readonly MachineObject[],
  sinceIso: string | undefined,
  retries: number,
): string | undefined {
  const since = sinceIso ? Date.parse(sinceIso) : 0;
  const records = checks
    .flatMap((h) => (h.status as MhcStatus).remediations ?? [])
    .filter((r) => r.reason === CapiReasons.InstanceStateError && Date.parse(r.time) >= since);
  const counted = new Set(records.map((r) => r.machine));
  const fresh = machines.filter((m) => {
    const c = m.status.conditions?.find((x) => x.type === CapiConditions.InfrastructureReady);
    return (
      !m.metadata.deletionTimestamp &&
      c?.status === 'False' &&
      c.reason === CapiReasons.InstanceStateError &&
      !counted.has(m.metadata.name)
    );
  });
  const total = records.length + fresh.length;
  if (total <= retries) return undefined;
  const last = fresh[0];
  const message = last
    ? `machine ${last.metadata.name}: ${last.status.conditions?.find((x) => x.type === CapiConditions.InfrastructureReady)?.message ?? 'server in ERROR'}`
    : (records[records.length - 1]?.message ?? 'servers went to ERROR');
  return `${message} (${total} server(s) failed; ${retries} replacement(s) allowed per operation)`;
}

/** Observation of one node group for the status projection. */
export function observeGroup(
  view: ClusterView,
  ng: NodeGroupObject,
  desired: DesiredCluster,
  version: string,
  names: MagnumNames,
  exhausted: string | undefined,
): GroupObservation {
  const machines = groupMachines(view, ng);
  if (isMaster(ng)) {
    const kcp = view.kcp;
    const wantTemplate = desired.controlPlaneTemplate.object.metadata.name;
    return {
      name: ng.spec.name,
      role: 'master',
      desiredReplicas: ng.spec.nodeCount,
      desiredVersion: version,
      machines,
      ...(exhausted ? { exhaustedRemediation: exhausted } : {}),
      ...(kcp
        ? {
            owner: {
              generation: kcp.metadata.generation,
              ...(kcp.status.observedGeneration !== undefined
                ? { observedGeneration: kcp.status.observedGeneration }
                : {}),
              specReplicas: kcp.spec.replicas ?? 1,
              replicas: kcp.status.replicas ?? 0,
              readyReplicas: kcp.status.readyReplicas ?? 0,
              upToDateReplicas: kcp.status.upToDateReplicas ?? 0,
              specVersion: kcp.spec.version,
              templateCurrent: kcp.spec.machineTemplate.spec.infrastructureRef.name === wantTemplate,
            },
          }
        : {}),
    };
  }
  const md = view.mds.get(names.group(ng.spec.name));
  const want = desired.groups.find((g) => g.nodeGroup.metadata.uid === ng.metadata.uid);
  return {
    name: ng.spec.name,
    role: 'worker',
    desiredReplicas: ng.spec.nodeCount,
    desiredVersion: version,
    machines,
    ...(exhausted ? { exhaustedRemediation: exhausted } : {}),
    ...(md
      ? {
          owner: {
            generation: md.metadata.generation,
            ...(md.status.observedGeneration !== undefined
              ? { observedGeneration: md.status.observedGeneration }
              : {}),
            specReplicas: md.spec.replicas ?? 1,
            replicas: md.status.replicas ?? 0,
            readyReplicas: md.status.readyReplicas ?? 0,
            upToDateReplicas: md.status.upToDateReplicas ?? 0,
            ...(md.spec.template.spec.version ? { specVersion: md.spec.template.spec.version } : {}),
            templateCurrent:
              want !== undefined &&
              md.spec.template.spec.infrastructureRef.name === want.infraTemplate.object.metadata.name,
          },
        }
      : {}),
  };
}

/** True when the control plane runs `version` on every machine (workers may follow). */
export function controlPlaneAt(view: ClusterView, version: string): boolean {
  const kcp = view.kcp;
  if (!kcp) return false;
  return (
    kcp.spec.version === version &&
    kcp.status.version === version &&
    (kcp.status.observedGeneration ?? 0) >= kcp.metadata.generation &&
    (kcp.status.upToDateReplicas ?? 0) === (kcp.spec.replicas ?? 1) &&
    (kcp.status.replicas ?? 0) === (kcp.spec.replicas ?? 1) &&
    isConditionTrue(kcp.status.conditions, CapiConditions.Available)
  );
}

/** Internal IPv4 addresses of machines, oldest first. */
export function addressesOf(machines: readonly MachineObject[]): string[] {
  return [...machines]
    .filter((m) => !m.metadata.deletionTimestamp)
    .sort((a, b) => a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp))
    .flatMap(
      (m) =>
        m.status.addresses
          ?.filter((a) => a.type === 'InternalIP')
          .map((a) => a.address)
          .slice(0, 1) ?? [],
    );
}
