import {
  CapiConditions,
  CapiReasons,
  CapiTypes,
  getCondition,
  refTypeKey,
  type CapiClusterObject,
  type KubeadmConfigObject,
  type MachineAddress,
  type MachineObject,
  type OpenStackMachineObject,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import type { ConditionInput } from '../common/conditions.ts';
import { falseCondition, mirrorCondition, trueCondition, unknownCondition } from '../common/conditions.ts';
import { pollDelay, type Env } from '../common/env.ts';
import { nodeReadyCondition } from '../common/node-snapshots.ts';
import { ownerRef, withOwnerRef, writeObject } from '../common/writes.ts';

/** What the phases observed, for the status. */
export interface MachineObservation {
  conditions: ConditionInput[];
  bootstrapReady: boolean;
  infraProvisioned: boolean;
  addresses?: MachineAddress[];
  failureDomain?: string;
  nodeRef?: { name: string };
  nodeInfo?: { kubeletVersion?: string; osImage?: string };
  /** Node Ready condition's transition time, when the node reports one. */
  nodeReadySince?: string;
  /** Spec fields the machine learns from its bootstrap and infrastructure objects. */
  dataSecretName?: string;
  providerID?: string;
  requeueAfterMs?: number;
}

/** Bootstrap: adopt the KubeadmConfig and pick up its data secret name. */
export async function observeBootstrap(
  store: ObjectStore,
  m: MachineObject,
  obs: MachineObservation,
): Promise<void> {
  const ref = m.spec.bootstrap.configRef;
  if (m.spec.bootstrap.dataSecretName && !ref) {
    obs.bootstrapReady = true;
    obs.conditions.push(trueCondition(CapiConditions.BootstrapConfigReady));
    return;
  }
  if (!ref) {
    obs.conditions.push(
      falseCondition(
        CapiConditions.BootstrapConfigReady,
        'InvalidSpec',
        'the machine has neither bootstrap data nor a bootstrap config',
      ),
    );
    return;
  }
  const cfg = await store.get<KubeadmConfigObject>(refTypeKey(ref), m.metadata.namespace, ref.name);
  if (!cfg) {
    obs.conditions.push(
      unknownCondition(
        CapiConditions.BootstrapConfigReady,
        CapiReasons.WaitingForBootstrapData,
        `${ref.kind} ${ref.name} does not exist`,
      ),
    );
    return;
  }
  if (!cfg.metadata.ownerReferences.some((r) => r.uid === m.metadata.uid)) {
    await writeObject(store, cfg, withOwnerRef(cfg, ownerRef(m)));
  }
  const name = cfg.status.dataSecretName;
  if (name && cfg.status.initialization?.dataSecretCreated) {
    obs.bootstrapReady = true;
    obs.dataSecretName = name;
    obs.conditions.push(trueCondition(CapiConditions.BootstrapConfigReady));
  } else {
    const ready = getCondition(cfg.status.conditions, CapiConditions.Ready);
    obs.conditions.push(
      ready?.status === 'False'
        ? mirrorCondition(CapiConditions.BootstrapConfigReady, ready, '', '')
        : unknownCondition(
            CapiConditions.BootstrapConfigReady,
            CapiReasons.WaitingForBootstrapData,
            ready?.message ?? 'waiting for bootstrap data',
          ),
    );
  }
}

/** Infrastructure: adopt the OpenStackMachine and copy provider ID, addresses, failure domain. */
export async function observeInfrastructure(
  store: ObjectStore,
  m: MachineObject,
  obs: MachineObservation,
): Promise<void> {
  const ref = m.spec.infrastructureRef;
  const osm = await store.get<OpenStackMachineObject>(refTypeKey(ref), m.metadata.namespace, ref.name);
  if (!osm) {
    obs.conditions.push(
      m.status.initialization?.infrastructureProvisioned
        ? falseCondition(
            CapiConditions.InfrastructureReady,
            'InfrastructureDeleted',
            `${ref.kind} ${ref.name} was deleted`,
          )
        : unknownCondition(
            CapiConditions.InfrastructureReady,
            CapiReasons.WaitingForInfrastructure,
            `${ref.kind} ${ref.name} does not exist`,
          ),
    );
    return;
  }
  if (!osm.metadata.ownerReferences.some((r) => r.uid === m.metadata.uid)) {
    await writeObject(store, osm, withOwnerRef(osm, ownerRef(m)));
  }
  obs.infraProvisioned = osm.status.initialization?.provisioned === true || osm.status.ready === true;
  obs.conditions.push(
    mirrorCondition(
      CapiConditions.InfrastructureReady,
      getCondition(osm.status.conditions, CapiConditions.Ready),
      CapiReasons.Provisioning,
      'waiting for the server',
    ),
  );
  if (osm.spec.providerID) obs.providerID = osm.spec.providerID;
  if (osm.status.addresses) obs.addresses = osm.status.addresses;
  const fd = osm.status.failureDomain ?? m.spec.failureDomain;
  if (fd) obs.failureDomain = fd;
}

/** Node: find the workload cluster's node with the machine's provider ID. */
export async function observeNode(
  env: Env,
  cluster: CapiClusterObject | undefined,
  m: MachineObject,
  providerID: string | undefined,
  obs: MachineObservation,
): Promise<void> {
  const keepPrevious = () => {
    if (m.status.nodeRef) obs.nodeRef = m.status.nodeRef;
    if (m.status.nodeInfo) obs.nodeInfo = m.status.nodeInfo;
    const prev = getCondition(m.status.conditions, CapiConditions.NodeReady);
    const prevHealthy = getCondition(m.status.conditions, CapiConditions.NodeHealthy);
    obs.conditions.push(
      mirrorCondition(CapiConditions.NodeReady, prev, 'WaitingForNode', 'waiting for the node to join'),
    );
    obs.conditions.push(
      mirrorCondition(
        CapiConditions.NodeHealthy,
        prevHealthy,
        'WaitingForNode',
        'waiting for the node to join',
      ),
    );
  };
  if (!providerID || !cluster) {
    obs.conditions.push(
      unknownCondition(CapiConditions.NodeReady, 'WaitingForNode', 'waiting for the server'),
    );
    obs.conditions.push(
      unknownCondition(CapiConditions.NodeHealthy, 'WaitingForNode', 'waiting for the server'),
    );
    return;
  }
  let snap;
  try {
    snap = await env.nodes.get(cluster, m.status.nodeRef ? 30_000 : 1_000);
  } catch {
    snap = undefined;
  }
  if (!snap) {
    keepPrevious();
    if (!m.status.nodeRef)
      obs.requeueAfterMs = pollDelay(infraSince(m), env.deps.clock.now(), env.settings.cloudPollMs);
    return;
  }
  const node = snap.byProviderId.get(providerID);
  if (!node) {
    if (m.status.nodeRef) {
      obs.nodeRef = m.status.nodeRef;
      obs.conditions.push(
        falseCondition(
          CapiConditions.NodeReady,
          'NodeDeleted',
          `node ${m.status.nodeRef.name} was deleted from the workload cluster`,
        ),
      );
      obs.conditions.push(
        falseCondition(
          CapiConditions.NodeHealthy,
          'NodeDeleted',
          `node ${m.status.nodeRef.name} was deleted from the workload cluster`,
        ),
      );
    } else {
      obs.conditions.push(
        unknownCondition(
          CapiConditions.NodeReady,
          'WaitingForNode',
          'waiting for the node to join the cluster',
        ),
      );
      obs.conditions.push(
        unknownCondition(
          CapiConditions.NodeHealthy,
          'WaitingForNode',
          'waiting for the node to join the cluster',
        ),
      );
      obs.requeueAfterMs = pollDelay(infraSince(m), env.deps.clock.now(), env.settings.cloudPollMs);
    }
    return;
  }
  obs.nodeRef = { name: node.metadata.name };
  const info = node.status?.nodeInfo;
  if (info)
    obs.nodeInfo = {
      ...(info.kubeletVersion ? { kubeletVersion: info.kubeletVersion } : {}),
      ...(info.osImage ? { osImage: info.osImage } : {}),
    };
  const ready = nodeReadyCondition(node);
  const status = ready?.status === 'True' ? 'True' : ready?.status === 'False' ? 'False' : 'Unknown';
  const cond: ConditionInput = {
    type: CapiConditions.NodeReady,
    status,
    ...(ready?.reason
      ? { reason: ready.reason }
      : { reason: status === 'True' ? 'NodeReady' : 'NodeNotReady' }),
    ...(ready?.message
      ? { message: ready.message }
      : status === 'True'
        ? {}
        : { message: `node ${node.metadata.name} is not ready` }),
  };
  obs.conditions.push(cond);
  obs.conditions.push({ ...cond, type: CapiConditions.NodeHealthy });
  if (ready?.lastTransitionTime) obs.nodeReadySince = ready.lastTransitionTime;
  if (status !== 'True')
    obs.requeueAfterMs = pollDelay(
      ready?.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : undefined,
      env.deps.clock.now(),
      5_000,
    );
}

/** The kinds a Machine refers to, for watches. */
export const MACHINE_CHILD_TYPES = [CapiTypes.KubeadmConfig, CapiTypes.OpenStackMachine] as const;

/** Since when the machine's infrastructure has been ready (its node may join from then on). */
function infraSince(m: MachineObject): number | undefined {
  const c = getCondition(m.status.conditions, CapiConditions.InfrastructureReady);
  return c?.status === 'True' ? Date.parse(c.lastTransitionTime) : Date.parse(m.metadata.creationTimestamp);
}
