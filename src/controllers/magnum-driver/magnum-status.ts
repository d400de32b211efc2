import {
  CapiConditions,
  CapiReasons,
  getCondition,
  isConditionTrue,
  type CapiClusterObject,
  type HealthStatus,
  type MachineObject,
  type OpenStackClusterObject,
} from '../../domain/index.ts';

/**
 * The projection of Cluster API objects onto Magnum's status model (pure): each node group is
 * in progress, complete or failed for the generation it was asked for; the cluster is complete
 * when its infrastructure and every group are, failed when any of them failed terminally or the
 * create timed out, and otherwise in progress with a reason a person can act on.
 */

/** What one node group looks like in Cluster API terms. */
export interface GroupObservation {
  /** Magnum node group name (`default-master`, `default-worker`, …). */
  name: string;
  role: 'master' | 'worker';
  desiredReplicas: number;
  desiredVersion: string;
  /** KubeadmControlPlane (masters) or MachineDeployment (workers); undefined while not created. */
  owner?: {
    generation: number;
    observedGeneration?: number;
    specReplicas: number;
    replicas: number;
    readyReplicas: number;
    upToDateReplicas: number;
    /** Version the owner asks for (KCP `spec.version`, MD template `spec.version`). */
    specVersion?: string;
    /** Whether the owner's template matches what the node group asks for (flavor, image). */
    templateCurrent: boolean;
  };
  machines: MachineObject[];
  /** Failures that a retry will not fix, recorded while replacing machines (policy: fail). */
  exhaustedRemediation?: string;
}

/** Verdict on a group or the infrastructure. */
export type Verdict =
  | { state: 'Complete'; reason: string }
  | { state: 'InProgress'; reason: string }
  | { state: 'Failed'; reason: string };

const TERMINAL_REASONS: ReadonlySet<string> = new Set([CapiReasons.Failed, CapiReasons.InvalidMachineSpec]);

/** A machine's problem worth showing, and whether it is terminal. */
export function machineProblem(m: MachineObject): { message: string; terminal: boolean } | undefined {
  const infra = getCondition(m.status.conditions, CapiConditions.InfrastructureReady);
  if (infra?.status === 'False' && infra.reason && infra.message) {
    if (TERMINAL_REASONS.has(infra.reason))
      return { message: `machine ${m.metadata.name}: ${infra.message}`, terminal: true };
    if (infra.reason === CapiReasons.InstanceStateError || infra.reason === CapiReasons.OpenStackError) {
      return { message: `machine ${m.metadata.name}: ${infra.message}`, terminal: false };
    }
  }
  const boot = getCondition(m.status.conditions, CapiConditions.BootstrapConfigReady);
  if (boot?.status === 'False' && boot.reason && TERMINAL_REASONS.has(boot.reason) && boot.message) {
    return { message: `machine ${m.metadata.name}: ${boot.message}`, terminal: true };
  }
  return undefined;
}

function isReady(m: MachineObject): boolean {
  return !!m.status.nodeRef && isConditionTrue(m.status.conditions, CapiConditions.NodeReady);
}

/** Verdict for one node group. */
export function groupVerdict(g: GroupObservation): Verdict {
  const what = g.role === 'master' ? 'control plane' : `node group ${g.name}`;
  const live = g.machines.filter((m) => !m.metadata.deletionTimestamp);
  const problems = g.machines.map(machineProblem).filter((p) => p !== undefined);
  const terminal = problems.find((p) => p.terminal);
  if (terminal) return { state: 'Failed', reason: terminal.message };
  if (g.exhaustedRemediation) return { state: 'Failed', reason: g.exhaustedRemediation };
  const o = g.owner;
  if (!o) return { state: 'InProgress', reason: `creating ${what}` };
  const ready = live.filter(isReady).length;
  const deleting = g.machines.length - live.length;
  const versionOk = o.specVersion === undefined || o.specVersion === g.desiredVersion;
  const settled =
    (o.observedGeneration ?? 0) >= o.generation &&
    o.specReplicas === g.desiredReplicas &&
    o.replicas === g.desiredReplicas &&
    o.readyReplicas === g.desiredReplicas &&
    o.upToDateReplicas === g.desiredReplicas &&
    live.length === g.desiredReplicas &&
    ready === g.desiredReplicas &&
    deleting === 0 &&
    versionOk &&
    o.templateCurrent;
  if (settled)
    return {
      state: 'Complete',
      reason: `${ready} of ${g.desiredReplicas} ${g.role === 'master' ? 'control plane' : 'worker'} machines ready`,
    };
  const parts = [`${what}: ${ready} of ${g.desiredReplicas} machines ready`];
  if (o.upToDateReplicas < o.replicas || !versionOk || !o.templateCurrent)
    parts.push(`${o.upToDateReplicas} of ${g.desiredReplicas} up to date`);
  if (deleting > 0) parts.push(`${deleting} being removed`);
  for (const p of problems.slice(0, 2)) parts.push(p.message);
  return { state: 'InProgress', reason: parts.join('; ') };
}

/** Verdict for the cluster's infrastructure (network, router, security groups, load balancer). */
export function infraVerdict(
  osc: OpenStackClusterObject | undefined,
  capi: CapiClusterObject | undefined,
): Verdict {
  if (!osc) return { state: 'InProgress', reason: 'creating cluster infrastructure' };
  const ready = getCondition(osc.status.conditions, CapiConditions.Ready);
  if (ready?.status === 'False' && ready.reason === CapiReasons.Failed) {
    return { state: 'Failed', reason: ready.message ?? 'cluster infrastructure failed' };
  }
  if (!osc.status.initialization?.provisioned) {
    for (const type of [
      CapiConditions.NetworkReady,
      CapiConditions.RouterReady,
      CapiConditions.SecurityGroupsReady,
      CapiConditions.APIEndpointReady,
    ]) {
      const c = getCondition(osc.status.conditions, type);
      if (c?.status !== 'True') return { state: 'InProgress', reason: c?.message ?? `waiting for ${type}` };
    }
    return { state: 'InProgress', reason: ready?.message ?? 'creating cluster infrastructure' };
  }
  if (!capi?.spec.controlPlaneEndpoint?.host)
    return { state: 'InProgress', reason: 'waiting for the control plane endpoint' };
  return { state: 'Complete', reason: 'infrastructure ready' };
}

/** Combined verdict for a Magnum cluster operation. */
export function clusterVerdict(
  infra: Verdict,
  groups: readonly { name: string; verdict: Verdict }[],
): Verdict {
  if (infra.state === 'Failed') return infra;
  const failed = groups.filter((g) => g.verdict.state === 'Failed');
  if (failed.length > 0) return { state: 'Failed', reason: failed.map((g) => g.verdict.reason).join('; ') };
  if (infra.state === 'InProgress') return infra;
  const pending = groups.filter((g) => g.verdict.state === 'InProgress');
  if (pending.length > 0)
    return { state: 'InProgress', reason: pending.map((g) => g.verdict.reason).join('; ') };
  return { state: 'Complete', reason: groups.map((g) => g.verdict.reason).join('; ') };
}

/** The create deadline has passed: the failure message, else undefined. */
export function createTimedOut(
  createdAtMs: number,
  timeoutMinutes: number,
  nowMs: number,
  progress: string,
): string | undefined {
  if (timeoutMinutes <= 0) return undefined;
  if (nowMs < createdAtMs + timeoutMinutes * 60_000) return undefined;
  return `Timed out after ${timeoutMinutes} minutes waiting for the cluster to be created: ${progress}`;
}

/**
 * Magnum health from the control plane and the nodes: HEALTHY when the API is available and every
 * node is Ready, UNHEALTHY otherwise; reason keys as Magnum's drivers report them
 * (`api`, `<node>.Ready`).
 */
export function healthOf(
  controlPlaneAvailable: boolean,
  machines: readonly MachineObject[],
): { status: HealthStatus; reason: Record<string, string> } {
  const reason: Record<string, string> = { api: controlPlaneAvailable ? 'ok' : 'nok' };
  let healthy = controlPlaneAvailable;
  for (const m of machines) {
    if (m.metadata.deletionTimestamp) continue;
    const ready = isReady(m);
    reason[`${m.status.nodeRef?.name ?? m.metadata.name}.Ready`] = ready ? 'True' : 'False';
    if (!ready) healthy = false;
  }
  return { status: healthy ? 'HEALTHY' : 'UNHEALTHY', reason };
}
