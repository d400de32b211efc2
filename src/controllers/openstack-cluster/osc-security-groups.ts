import {
  isNotFound,
  type CloudClients,
  type CreateSecurityGroupRuleInput,
  type SecurityGroupRule,
} from '../../cloud/index.ts';
import type { OpenStackClusterObject } from '../../domain/index.ts';
import { oscNames, type RecordStatus } from './osc-network.ts';

/**
 * The cluster's two managed security groups (control plane, workers) with the rules
 * Kubernetes needs, as the OpenStack provider creates them: API 6443 from anywhere (through the
 * load balancer), etcd 2379-2380 and kubelet 10250 between nodes, NodePorts 30000-32767, and —
 * with `allowAllInClusterTraffic` — everything between the cluster's nodes.
 */

type Rule = Omit<CreateSecurityGroupRuleInput, 'securityGroupId'>;

function rules(self: 'cp' | 'worker', cp: string, worker: string, allowAll: boolean): Rule[] {
  const out: Rule[] = [];
  const tcp = (
    min: number,
    max: number,
    from: { remoteGroupId: string } | { remoteIpPrefix: string },
    description: string,
  ): Rule => ({
    direction: 'ingress',
    ethertype: 'IPv4',
    protocol: 'tcp',
    portRangeMin: min,
    portRangeMax: max,
    ...from,
    description,
  });
  if (self === 'cp') {
    out.push(tcp(6443, 6443, { remoteIpPrefix: '0.0.0.0/0' }, 'Kubernetes API'));
    out.push(tcp(2379, 2380, { remoteGroupId: cp }, 'etcd'));
  }
  out.push(tcp(10250, 10250, { remoteGroupId: cp }, 'kubelet API from the control plane'));
  if (self === 'worker') {
    out.push(tcp(30000, 32767, { remoteIpPrefix: '0.0.0.0/0' }, 'NodePort services'));
    out.push({
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'udp',
      portRangeMin: 30000,
      portRangeMax: 32767,
      remoteIpPrefix: '0.0.0.0/0',
      description: 'NodePort services (UDP)',
    });
  }
  if (allowAll) {
    out.push({
      direction: 'ingress',
      ethertype: 'IPv4',
      remoteGroupId: cp,
      description: 'in-cluster traffic from the control plane',
    });
    out.push({
      direction: 'ingress',
      ethertype: 'IPv4',
      remoteGroupId: worker,
      description: 'in-cluster traffic from workers',
    });
  }
  return out;
}

async function ensureGroup(
  cloud: CloudClients,
  name: string,
  knownId: string | undefined,
  tags: string[],
  fresh: boolean,
): Promise<{ id: string; made?: SecurityGroupRule[] }> {
  if (knownId) {
    try {
      await cloud.network.getSecurityGroup(knownId);
      return { id: knownId };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  const found = fresh ? [] : await cloud.network.listSecurityGroups({ name });
  if (found[0]) return { id: found[0].id };
  const sg = await cloud.network.createSecurityGroup({
    name,
    description: 'Created by Magnetar (Cluster API provider OpenStack layout)',
    tags,
  });
  // Neutron answers a new group with the rules it gave it (its default egress rules, and any
  // ingress ones an operator's default-rule templates add): nothing else can have added one yet
  return { id: sg.id, made: sg.rules };
}

/** Create the groups (recorded at once) and converge their rules. */
export async function reconcileSecurityGroups(
  cloud: CloudClients,
  osc: OpenStackClusterObject,
  tags: string[],
  record: RecordStatus,
  fresh: boolean,
): Promise<void> {
  const n = oscNames(osc);
  // each group is recorded as soon as it is known
  const group = async (key: 'controlPlaneSecurityGroup' | 'workerSecurityGroup') => {
    const found = await ensureGroup(cloud, n[key], osc.status[key]?.id, tags, fresh);
    if (found.id !== osc.status[key]?.id) await record({ [key]: { id: found.id, name: n[key] } });
    return found;
  };
  const cp = await group('controlPlaneSecurityGroup');
  const worker = await group('workerSecurityGroup');
  const allowAll = osc.spec.managedSecurityGroups?.allowAllInClusterTraffic ?? true;
  for (const [self, { id, made }] of [
    ['cp', cp],
    ['worker', worker],
  ] as const) {
    const existing = made ?? (await cloud.network.listSecurityGroupRules({ securityGroupId: id }));
    // the missing ones in one request (all or none are made, so a retry finds the same set missing)
    const missing = rules(self, cp.id, worker.id, allowAll).filter(
      (r) =>
        !existing.some(
          (e) =>
            e.direction === r.direction &&
            (e.protocol ?? undefined) === r.protocol &&
            (e.portRangeMin ?? undefined) === r.portRangeMin &&
            (e.portRangeMax ?? undefined) === r.portRangeMax &&
            (e.remoteGroupId ?? undefined) === r.remoteGroupId &&
            (e.remoteIpPrefix ?? undefined) === r.remoteIpPrefix,
        ),
    );
    await cloud.network.createSecurityGroupRules(missing.map((r) => ({ ...r, securityGroupId: id })));
  }
}

/** Delete the cluster's security groups (gone counts as deleted). */
export async function deleteSecurityGroups(cloud: CloudClients, osc: OpenStackClusterObject): Promise<void> {
  const n = oscNames(osc);
  const ids = new Set<string>();
  for (const g of [osc.status.controlPlaneSecurityGroup, osc.status.workerSecurityGroup])
    if (g?.id) ids.add(g.id);
  for (const name of [n.controlPlaneSecurityGroup, n.workerSecurityGroup]) {
    for (const g of await cloud.network.listSecurityGroups({ name })) ids.add(g.id);
  }
  for (const id of ids) {
    try {
      await cloud.network.deleteSecurityGroup(id);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
