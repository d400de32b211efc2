import { CloudError, isNotFound, type CloudClients } from '../../cloud/index.ts';
import type { OpenStackClusterObject, OpenStackMachineObject } from '../../domain/index.ts';
import type { RecordMachine } from './osm-resources.ts';

/**
 * A control-plane machine's membership in the API load balancer's pool (port 6443), recorded
 * at once; Octavia takes no change while the load balancer is PENDING_*, so a refused add is
 * tried again later, and the member is done once its own status is ACTIVE.
 */
export async function ensureMember(
  cloud: CloudClients,
  osm: OpenStackMachineObject,
  osc: OpenStackClusterObject,
  ip: string | undefined,
  record: RecordMachine,
): Promise<{ done: true } | { done: false; waiting: string }> {
  const lbs = osc.status.apiServerLoadBalancer;
  if (!lbs?.id || !lbs.poolID) return { done: false, waiting: 'waiting for the API load balancer pool' };
  if (!ip) return { done: false, waiting: 'waiting for the server address' };
  const known = await recordedMember(cloud, osm, osc);
  if (known) return known;
  // Asked straight away: Octavia refuses with a 409 both while the load balancer is PENDING_* and
  // when a member with this address is there already (an earlier try's, its id never recorded),
  // so only a refusal needs the pool's members read, to tell the two apart.
  const port = osc.spec.apiServerPort ?? 6443;
  let member;
  try {
    member = await cloud.loadBalancer.createMember(lbs.poolID, {
      name: osm.metadata.name,
      address: ip,
      protocolPort: port,
      ...(osc.status.network?.subnets?.[0]?.id ? { subnetId: osc.status.network.subnets[0].id } : {}),
    });
  } catch (err) {
    if (!isBusy(err)) throw err;
    const existing = (await cloud.loadBalancer.listMembers(lbs.poolID)).find(
      (m) => m.name === osm.metadata.name || (m.address === ip && m.protocolPort === port),
    );
    if (!existing) return { done: false, waiting: busyWith(lbs.name) };
    member = existing;
  }
  await record({ resources: { ...osm.status.resources, loadBalancerMemberID: member.id } });
  return applied(member, lbs.name);
}

/**
 * The recorded member's state: done once Octavia has applied it, else what it waits for;
 * undefined when no member is recorded or it is gone. The member's own provisioning status says
 * whether Octavia has applied it: the load balancer's also reflects the other masters' members.
 */
export async function recordedMember(
  cloud: CloudClients,
  osm: OpenStackMachineObject,
  osc: OpenStackClusterObject,
): Promise<{ done: true } | { done: false; waiting: string } | undefined> {
  const lbs = osc.status.apiServerLoadBalancer;
  const id = osm.status.resources?.loadBalancerMemberID;
  if (!lbs?.poolID || !id) return undefined;
  try {
    return applied(await cloud.loadBalancer.getMember(lbs.poolID, id), lbs.name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Done once Octavia has applied the member (its own status ACTIVE), else what it waits for. */
function applied(
  member: { name: string; provisioningStatus: string },
  lbName: string,
): { done: true } | { done: false; waiting: string } {
  return member.provisioningStatus === 'ACTIVE'
    ? { done: true }
    : {
        done: false,
        waiting: `waiting for member ${member.name} of load balancer ${lbName} (${member.provisioningStatus})`,
      };
}

/** Remove the machine from the pool (gone counts as removed); false while the load balancer is busy. */
export async function removeMember(
  cloud: CloudClients,
  osm: OpenStackMachineObject,
  osc: OpenStackClusterObject | undefined,
): Promise<{ done: boolean; waiting?: string }> {
  const lbs = osc?.status.apiServerLoadBalancer;
  if (!lbs?.id || !lbs.poolID) return { done: true };
  const ids = new Set<string>();
  if (osm.status.resources?.loadBalancerMemberID) ids.add(osm.status.resources.loadBalancerMemberID);
  try {
    for (const m of await cloud.loadBalancer.listMembers(lbs.poolID))
      if (m.name === osm.metadata.name) ids.add(m.id);
  } catch (err) {
    if (isNotFound(err)) return { done: true };
    throw err;
  }
  if (ids.size === 0) return { done: true };
  try {
    const lb = await cloud.loadBalancer.getLoadBalancer(lbs.id);
    if (lb.provisioningStatus.startsWith('PENDING'))
      return { done: false, waiting: `waiting for load balancer ${lbs.name} (${lb.provisioningStatus})` };
  } catch (err) {
    if (isNotFound(err)) return { done: true };
    throw err;
  }
  for (const id of ids) {
    try {
      await cloud.loadBalancer.deleteMember(lbs.poolID, id);
    } catch (err) {
      if (isBusy(err)) return { done: false, waiting: busyWith(lbs.name) };
      if (!isNotFound(err)) throw err;
    }
  }
  return { done: true };
}

/**
 * Octavia's 409 for a change asked while the load balancer is PENDING_* (another machine's
 * member change got in first: the control-plane machines of a cluster join, and leave, at about
 * the same time), or for an add whose address is in the pool already. Wait and try again, as for
 * PENDING_*. A 409 that names a quota is not this: it stays an error, reported as the cloud's
 * refusal.
 */
function isBusy(err: unknown): boolean {
  return err instanceof CloudError && err.kind === 'conflict';
}

function busyWith(name: string): string {
  return `waiting for load balancer ${name} (busy with another change)`;
}
