import {
  CapiAnnotations,
  isConditionTrue,
  CapiConditions,
  type FailureDomain,
  type MachineObject,
} from '../../domain/index.ts';

/**
 * Where control-plane machines go and which one leaves first, as KubeadmControlPlane decides:
 * scale up into the failure domain with the fewest control-plane machines (ties: the order the
 * infrastructure listed them), scale down / roll out the outdated or marked machine, then the
 * oldest in the failure domain with the most machines.
 */

/** Failure domains eligible for control-plane machines, in the infrastructure's order. */
export function controlPlaneDomains(domains: readonly FailureDomain[] | undefined): string[] {
  return (domains ?? []).filter((d) => d.controlPlane !== false).map((d) => d.name);
}

/** Failure domain for the next control-plane machine, or undefined when none are known. */
export function nextFailureDomain(
  domains: readonly string[],
  machines: readonly MachineObject[],
): string | undefined {
  if (domains.length === 0) return undefined;
  const count = new Map(domains.map((d) => [d, 0]));
  for (const m of machines) {
    if (m.metadata.deletionTimestamp) continue;
    const fd = m.spec.failureDomain;
    if (fd !== undefined && count.has(fd)) count.set(fd, count.get(fd)! + 1);
  }
  let best = domains[0]!;
  for (const d of domains) if (count.get(d)! < count.get(best)!) best = d;
  return best;
}

/**
 * The machine to remove on scale-down or rollout: outdated + marked for deletion, then marked,
 * then outdated and unhealthy, then outdated, then any; within the chosen set, from the failure
 * domain holding the most machines, the oldest.
 */
export function selectControlPlaneVictim(
  machines: readonly MachineObject[],
  isOutdated: (m: MachineObject) => boolean,
): MachineObject | undefined {
  const live = machines.filter((m) => !m.metadata.deletionTimestamp);
  const marked = (m: MachineObject) => CapiAnnotations.deleteMachine in m.metadata.annotations;
  const unhealthy = (m: MachineObject) => !isConditionTrue(m.status.conditions, CapiConditions.NodeHealthy);
  const tiers: ((m: MachineObject) => boolean)[] = [
    (m) => isOutdated(m) && marked(m),
    marked,
    (m) => isOutdated(m) && unhealthy(m),
    isOutdated,
    () => true,
  ];
  for (const tier of tiers) {
    const set = live.filter(tier);
    if (set.length === 0) continue;
    const perDomain = new Map<string, number>();
    for (const m of live)
      perDomain.set(m.spec.failureDomain ?? '', (perDomain.get(m.spec.failureDomain ?? '') ?? 0) + 1);
    return [...set].sort((a, b) => {
      const da = perDomain.get(a.spec.failureDomain ?? '') ?? 0;
      const db = perDomain.get(b.spec.failureDomain ?? '') ?? 0;
      if (da !== db) return db - da;
      return (
        a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp) ||
        a.metadata.name.localeCompare(b.metadata.name)
      );
    })[0];
  }
  return undefined;
}
