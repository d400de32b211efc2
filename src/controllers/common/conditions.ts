import type { Condition } from '../../domain/index.ts';

/** A condition to set, without its transition time. */
export interface ConditionInput {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

/**
 * Build a condition list from scratch each reconcile (status is rebuilt from observation),
 * keeping each condition's `lastTransitionTime` from `previous` while its status is unchanged.
 * Conditions other controllers own (`keep`) are carried over untouched.
 */
export function buildConditions(
  previous: readonly Condition[] | undefined,
  next: readonly ConditionInput[],
  nowIso: string,
  keep: readonly string[] = [],
  observedGeneration?: number,
): Condition[] {
  // One list built in place (the controllers build conditions on nearly every pass): a type given
  // twice keeps its first place and takes the later values.
  const out: Condition[] = [];
  for (const c of next) {
    const i = out.findIndex((o) => o.type === c.type);
    const earlier = i >= 0 ? out[i] : previous?.find((p) => p.type === c.type);
    const condition: Condition = {
      type: c.type,
      status: c.status,
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.message ? { message: c.message } : {}),
      ...(observedGeneration === undefined ? {} : { observedGeneration }),
      lastTransitionTime: earlier && earlier.status === c.status ? earlier.lastTransitionTime : nowIso,
    };
    if (i >= 0) out[i] = condition;
    else out.push(condition);
  }
  for (const k of keep) {
    const prev = previous?.find((p) => p.type === k);
    if (prev && !out.some((c) => c.type === k)) out.push(prev);
  }
  // A stable order, so two writers of one object's conditions never undo each other's order.
  return out.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}

/** A True condition. */
export function trueCondition(type: string, reason?: string, message?: string): ConditionInput {
  return { type, status: 'True', ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

/** A False condition with a reason and a message a person can act on. */
export function falseCondition(type: string, reason: string, message: string): ConditionInput {
  return { type, status: 'False', reason, message };
}

/** An Unknown condition. */
export function unknownCondition(type: string, reason: string, message: string): ConditionInput {
  return { type, status: 'Unknown', reason, message };
}

/** Mirror another object's condition under a new type (or report it missing). */
export function mirrorCondition(
  type: string,
  source: Condition | undefined,
  missingReason: string,
  missingMessage: string,
): ConditionInput {
  if (!source) return unknownCondition(type, missingReason, missingMessage);
  return {
    type,
    status: source.status,
    ...(source.reason ? { reason: source.reason } : {}),
    ...(source.message ? { message: source.message } : {}),
  };
}
