import type { MachineObject, MachinePhase } from '../../domain/index.ts';

/**
 * A Machine's phase, derived as Cluster API does (informational; conditions are the truth):
 * Pending → Provisioning (bootstrap data ready) → Provisioned (provider ID known) → Running
 * (node joined and infrastructure provisioned); Deleting once marked for deletion.
 */
export function machinePhase(
  m: MachineObject,
  bootstrapReady: boolean,
  infraProvisioned: boolean,
): MachinePhase {
  let phase: MachinePhase = 'Pending';
  if (bootstrapReady && !infraProvisioned) phase = 'Provisioning';
  if (m.spec.providerID) phase = 'Provisioned';
  if (m.status.nodeRef && infraProvisioned) phase = 'Running';
  if (m.metadata.deletionTimestamp) phase = 'Deleting';
  return phase;
}
