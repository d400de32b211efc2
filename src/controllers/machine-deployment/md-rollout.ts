/**
 * The rolling-update arithmetic of a MachineDeployment, as Cluster API (and Kubernetes
 * Deployments) do it: the newest MachineSet grows while the total stays within
 * replicas + maxSurge; old MachineSets shrink while at least replicas − maxUnavailable
 * machines stay available. Defaults: maxSurge 1, maxUnavailable 0, so a rollout replaces one
 * machine at a time and never goes below the requested size.
 */

/** What the rollout needs to know about one MachineSet. */
export interface SetView {
  name: string;
  /** Desired replicas of the set as currently written. */
  replicas: number;
  /** Machines of the set that are available. */
  available: number;
  /** Creation time (ISO), oldest sets shrink first. */
  created: string;
}

/** Resolve an int-or-percent against `total`; percentages round up for surge, down for unavailable. */
export function resolveIntOrPercent(
  value: number | string | undefined,
  total: number,
  fallback: number,
  roundUp: boolean,
): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number') return Math.max(0, Math.floor(value));
  const m = /^(\d+)%$/.exec(value);
  if (!m) return fallback;
  const raw = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(raw) : Math.floor(raw);
}

/** The surge and unavailability allowed for `replicas`, never both zero. */
export function rolloutBounds(
  replicas: number,
  rollingUpdate: { maxSurge?: number | string; maxUnavailable?: number | string } | undefined,
): { maxSurge: number; maxUnavailable: number } {
  let maxSurge = resolveIntOrPercent(rollingUpdate?.maxSurge, replicas, 1, true);
  const maxUnavailable = resolveIntOrPercent(rollingUpdate?.maxUnavailable, replicas, 0, false);
  if (maxSurge === 0 && maxUnavailable === 0) maxSurge = 1;
  return { maxSurge, maxUnavailable };
}

/**
 * New replica counts per MachineSet (by name) for one step of a rolling update towards
 * `replicas` machines in `newSet`. Sets not in the result keep their count.
 */
export function planRollout(
  replicas: number,
  newSet: SetView,
  oldSets: readonly SetView[],
  bounds: { maxSurge: number; maxUnavailable: number },
): Map<string, number> {
  const plan = new Map<string, number>();
  if (oldSets.length === 0) {
    if (newSet.replicas !== replicas) plan.set(newSet.name, replicas);
    return plan;
  }
  // Scale up the new set within the surge budget (and never above the target).
  const oldTotal = oldSets.reduce((n, s) => n + s.replicas, 0);
  let newReplicas = Math.min(newSet.replicas, replicas);
  const room = replicas + bounds.maxSurge - (oldTotal + newReplicas);
  if (room > 0) newReplicas = Math.min(replicas, newReplicas + room);
  if (newReplicas !== newSet.replicas) plan.set(newSet.name, newReplicas);

  // Scale down old sets while enough machines stay available: first the old machines that are
  // not available anyway, then available ones as far as availability allows.
  const minAvailable = Math.max(0, replicas - bounds.maxUnavailable);
  const allCount = oldTotal + newReplicas;
  const newUnavailable = Math.max(0, newReplicas - newSet.available);
  const oldByAge = [...oldSets].sort((a, b) => a.created.localeCompare(b.created));
  let cleanup = allCount - minAvailable - newUnavailable;
  for (const s of oldByAge) {
    if (cleanup <= 0) break;
    const unavailable = Math.max(0, s.replicas - s.available);
    const cut = Math.min(unavailable, cleanup);
    if (cut > 0) {
      plan.set(s.name, s.replicas - cut);
      cleanup -= cut;
    }
  }
  const totalAvailable =
    newSet.available + oldSets.reduce((n, s) => n + Math.min(s.available, s.replicas), 0);
  let budget = totalAvailable - minAvailable;
  for (const s of oldByAge) {
    if (budget <= 0) break;
    const current = plan.get(s.name) ?? s.replicas;
    if (current === 0) continue;
    const cut = Math.min(current, budget);
    plan.set(s.name, current - cut);
    budget -= cut;
  }
  for (const s of oldSets) if (plan.get(s.name) === s.replicas) plan.delete(s.name);
  return plan;
}
