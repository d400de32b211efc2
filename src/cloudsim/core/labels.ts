import { createHash } from 'node:crypto';

/** The longest label value the store's index keeps (a Kubernetes label value's limit). */
const MAX = 63;

/**
 * A label-safe form of a name or other text: the store's label index finds rows by it, and
 * the full value is compared on each row found. Text that does not fit keeps its first 50
 * characters and a hash of the whole, so long names that share a prefix (Cluster API's
 * `k8s-clusterapi-cluster-<namespace>-<name>`) stay apart in the index rather than all
 * matching one truncated value.
 */
export function labelValue(s: string): string {
  const safe = s.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (safe.length <= MAX) return safe;
  return `${safe.slice(0, MAX - 13)}-${createHash('sha256').update(s).digest('hex').slice(0, 12)}`;
}
