import type { TypeKey } from '../../domain/index.ts';

/** apiVersion of every object the embedded cloud keeps in Magnetar's store. */
export const CLOUD_API_VERSION = 'cloud.magnetar.io/v1';

/**
 * The kinds the embedded cloud stores. The namespace is the owning project id, except for
 * flavors (global, namespace '') and keypairs (per user, as in Nova: namespace = user id).
 */
export const CLOUD_KINDS = [
  'Flavor',
  'Keypair',
  'Server',
  'Image',
  'Network',
  'Subnet',
  'Port',
  'IpAllocation',
  'Router',
  'SecurityGroup',
  'SecurityGroupRule',
  'FloatingIp',
  'LoadBalancer',
  'Listener',
  'Pool',
  'Member',
  'HealthMonitor',
  'Volume',
  'QuotaSet',
  'Container',
  'StoredObject',
  'BlobChunk',
] as const;

export type CloudKind = (typeof CLOUD_KINDS)[number];

/** The store type key of a cloud kind. */
export function cloudType(kind: CloudKind): TypeKey {
  return `${kind}.cloud.magnetar.io`;
}

/** Kinds that are bookkeeping, not user-visible resources (left out of the inventory). */
export const INTERNAL_KINDS: readonly CloudKind[] = ['IpAllocation', 'BlobChunk', 'QuotaSet'];
