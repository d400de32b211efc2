import {
  CapiAnnotations,
  CapiConditions,
  CapiReasons,
  getCondition,
  type MachineHealthCheckSpec,
  type MachineObject,
} from '../../domain/index.ts';
import { resolveIntOrPercent } from '../machine-deployment/md-rollout.ts';

/**
 * Health of the machines a MachineHealthCheck watches. A machine is unhealthy when:
 * - its server went to ERROR (infrastructure reports `InstanceStateError`) — at once;
 * - its node was deleted — at once;
 * - it has no node `checks.nodeStartupTimeoutSeconds` after it could first have joined;
 * - its node's condition matches an `unhealthyNodeConditions` entry for longer than the timeout
 *   (the `Ready` condition, which the Machine mirrors as `NodeReady`);
 * - it carries the `cluster.x-k8s.io/remediate-machine` annotation.
 */

/** Verdict for one machine. */
export interface TargetHealth {
  machine: MachineObject;
  healthy: boolean;
  /** Why it is unhealthy (condition reason) and a message a person can read. */
  reason?: string;
  message?: string;
  /** When a healthy machine would turn unhealthy if nothing changes (ms since epoch). */
  recheckAtMs?: number;
}

/** Default node startup timeout. @default 600 s */
export const DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS = 600;

/** Evaluate one machine at `nowMs`; `joinableSinceMs` is when the cluster could first accept nodes. */
export function evaluateMachine(
  machine: MachineObject,
  spec: MachineHealthCheckSpec,
  nowMs: number,
  joinableSinceMs: number | undefined,
): TargetHealth {
  const unhealthy = (reason: string, message: string): TargetHealth => ({
    machine,
    healthy: false,
    reason,
    message,
  });
  const name = machine.metadata.name;
  if (CapiAnnotations.remediateMachine in machine.metadata.annotations) {
    return unhealthy(CapiReasons.UnhealthyMachine, `machine ${name} was marked for remediation`);
  }
  const infra = getCondition(machine.status.conditions, CapiConditions.InfrastructureReady);
  if (infra?.status === 'False' && infra.reason === CapiReasons.InstanceStateError) {
    return unhealthy(
      CapiReasons.InstanceStateError,
      `machine ${name}: ${infra.message ?? 'server is in ERROR state'}`,
    );
  }
  const nodeReady = getCondition(machine.status.conditions, CapiConditions.NodeReady);
  if (machine.status.nodeRef && nodeReady?.reason === 'NodeDeleted') {
    return unhealthy(
      CapiReasons.UnhealthyNode,
      `machine ${name}: node ${machine.status.nodeRef.name} was deleted`,
    );
  }
  let recheckAtMs: number | undefined;
  const earliest = (t: number) => {
    recheckAtMs = recheckAtMs === undefined ? t : Math.min(recheckAtMs, t);
  };
  if (!machine.status.nodeRef) {
    const timeout = spec.checks?.nodeStartupTimeoutSeconds ?? DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS;
    if (timeout > 0 && joinableSinceMs !== undefined) {
      const since = Math.max(Date.parse(machine.metadata.creationTimestamp), joinableSinceMs);
      const deadline = since + timeout * 1000;
      if (nowMs >= deadline) {
        return unhealthy(CapiReasons.NodeStartupTimeout, `machine ${name} has no node after ${timeout} s`);
      }
      earliest(deadline);
    }
    return { machine, healthy: true, ...(recheckAtMs === undefined ? {} : { recheckAtMs }) };
  }
  for (const c of spec.checks?.unhealthyNodeConditions ?? []) {
    if (c.type !== 'Ready' || !nodeReady) continue;
    if (nodeReady.status !== c.status) continue;
    const deadline = Date.parse(nodeReady.lastTransitionTime) + c.timeoutSeconds * 1000;
    if (nowMs >= deadline) {
      return unhealthy(
        CapiReasons.UnhealthyNode,
        `machine ${name}: node ${machine.status.nodeRef.name} has been Ready=${c.status} for more than ${c.timeoutSeconds} s`,
      );
    }
    earliest(deadline);
  }
  return { machine, healthy: true, ...(recheckAtMs === undefined ? {} : { recheckAtMs }) };
}

/**
 * Whether remediation may proceed: the number of unhealthy targets must not exceed
 * `unhealthyLessThanOrEqualTo` (default 100%; a percentage allows at least one machine) and must lie within `unhealthyInRange` when set.
 */
export function remediationAllowed(
  spec: MachineHealthCheckSpec,
  total: number,
  unhealthy: number,
): { allowed: boolean; remediationsAllowed: number; message?: string } {
  const trigger = spec.remediation?.triggerIf;
  if (trigger?.unhealthyInRange) {
    const m = /^\[(\d+)-(\d+)\]$/.exec(trigger.unhealthyInRange);
    if (m) {
      const lo = Number(m[1]);
      const hi = Number(m[2]);
      if (unhealthy < lo || unhealthy > hi) {
        return {
          allowed: false,
          remediationsAllowed: 0,
          message: `${unhealthy} of ${total} machines are unhealthy, outside the range ${trigger.unhealthyInRange}: not remediating`,
        };
      }
      return { allowed: true, remediationsAllowed: hi - unhealthy };
    }
  }
  // Percentages round down, but never below one machine: otherwise a group of one could never be healed.
  const limit = trigger?.unhealthyLessThanOrEqualTo ?? '100%';
  const resolved = resolveIntOrPercent(limit, total, total, false);
  const max = typeof limit === 'string' && total > 0 ? Math.max(1, resolved) : resolved;
  if (unhealthy > max) {
    return {
      allowed: false,
      remediationsAllowed: 0,
      message: `${unhealthy} of ${total} machines are unhealthy, more than the ${String(trigger?.unhealthyLessThanOrEqualTo ?? '100%')} allowed: not remediating`,
    };
  }
  return { allowed: true, remediationsAllowed: Math.max(0, max - unhealthy) };
}
