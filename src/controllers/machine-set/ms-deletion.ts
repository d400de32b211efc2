import {
  CapiAnnotations,
  CapiConditions,
  getCondition,
  serverIdFromProviderId,
  type DeletionOrder,
  type MachineObject,
} from '../../domain/index.ts';

/**
 * Which machines a MachineSet removes when it scales down: the ones marked for deletion
 * (annotation `cluster.x-k8s.io/delete-machine`, which the magnum driver sets for
 * `nodes_to_remove`), then the unhealthy ones (node not healthy, or never got a node), then by
 * the deletion order — Magnetar defaults to oldest first.
 */
export function machinesToDelete(
  machines: readonly MachineObject[],
  count: number,
  order: DeletionOrder = 'Oldest',
): MachineObject[] {
  if (count <= 0) return [];
  const live = machines.filter((m) => !m.metadata.deletionTimestamp);
  const rank = (m: MachineObject): number => {
    if (CapiAnnotations.deleteMachine in m.metadata.annotations) return 0;
    if (CapiAnnotations.remediateMachine in m.metadata.annotations) return 1;
    const health = getCondition(m.status.conditions, CapiConditions.NodeHealthy);
    if (health?.status === 'False') return 1;
    if (!m.status.nodeRef) return 2;
    return 3;
  };
  const byAge = (a: MachineObject, b: MachineObject) =>
    a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp) ||
    a.metadata.name.localeCompare(b.metadata.name);
  const sorted = [...live].sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    if (ra !== rb) return ra - rb;
    switch (order) {
      case 'Oldest':
        return byAge(a, b);
      case 'Newest':
        return byAge(b, a);
      case 'Random':
        return a.metadata.uid.localeCompare(b.metadata.uid);
    }
  });
  return sorted.slice(0, count);
}

/**
 * True when `machine` is named by one of `nodes` as Magnum's `nodes_to_remove` names them:
 * the server uuid, the server (= node) name, or the machine name.
 */
export function machineMatchesNode(
  machine: MachineObject,
  nodes: readonly string[],
  serverName?: string,
): boolean {
  const serverId = serverIdFromProviderId(machine.spec.providerID);
  return nodes.some(
    (n) =>
      n === machine.metadata.name ||
      (serverId !== undefined && n === serverId) ||
      (serverName !== undefined && n === serverName) ||
      (machine.status.nodeRef !== undefined && n === machine.status.nodeRef.name),
  );
}
