import type { CapiClusterObject, ClusterPhase } from '../../domain/index.ts';

/**
 * A Cluster's phase as Cluster API computes it (informational): Pending → Provisioning (it
 * references infrastructure or a control plane) → Provisioned (infrastructure provisioned and
 * the API endpoint known; machines may still be coming) → Deleting.
 */
export function clusterPhase(cluster: CapiClusterObject, infraProvisioned: boolean): ClusterPhase {
  let phase: ClusterPhase = 'Pending';
  if (cluster.spec.infrastructureRef || cluster.spec.controlPlaneRef) phase = 'Provisioning';
  if (infraProvisioned && cluster.spec.controlPlaneEndpoint?.host) phase = 'Provisioned';
  if (cluster.metadata.deletionTimestamp) phase = 'Deleting';
  return phase;
}
