import { z } from 'zod';

/**
 * The operator policy: the provider's rules for clusters (from its user guide), as data so a
 * deployment can change the numbers without touching code. The Magnum façade enforces them at
 * request time; the driver reads `spec.missingRequiredFields` of clusters the façade accepted
 * although required options were missing.
 */

/** Cluster-create fields the policy can require (Magnum wire names). */
export const REQUIRED_CREATE_FIELD_NAMES = [
  'cluster_template_id',
  'master_count',
  'master_flavor_id',
  'node_count',
  'flavor_id',
  'keypair',
] as const;

/** One cluster-create field the policy can require. */
export type RequiredCreateField = (typeof REQUIRED_CREATE_FIELD_NAMES)[number];

/** The `openstack coe cluster create` option a user types for each field. */
export const CREATE_FIELD_OPTIONS: Record<RequiredCreateField, string> = {
  cluster_template_id: '--cluster-template',
  master_count: '--master-count',
  master_flavor_id: '--master-flavor',
  node_count: '--node-count',
  flavor_id: '--flavor',
  keypair: '--keypair',
};

/** Schema of the operator policy, with the user guide's defaults. */
export const OperatorPolicySchema = z
  .object({
    /**
     * Only service accounts may create clusters, so a cluster never depends on a person's
     * account. Others get 403 with a message that says to use a service account.
     * @default true
     */
    serviceAccountRequired: z.boolean().default(true),
    /**
     * Fields a cluster create must carry (null counts as missing). A create that lacks any is
     * accepted, and the cluster is created already `CREATE_FAILED`, its `status_reason` naming
     * the missing options as the user types them.
     * @default ['cluster_template_id','master_count','master_flavor_id','node_count','flavor_id','keypair']
     */
    requiredCreateFields: z
      .array(z.enum(REQUIRED_CREATE_FIELD_NAMES))
      .default([...REQUIRED_CREATE_FIELD_NAMES]),
    /** Refuse even master counts (400). @default true */
    oddMasterCountOnly: z.boolean().default(true),
    /**
     * Most workers one node group may hold (create, resize, nodegroup create/update); above it
     * the request is refused with a hint to add another node group. `null` = no limit.
     * @default 10
     */
    maxNodesPerNodeGroup: z.number().int().positive().nullable().default(10),
    /**
     * A control-plane load balancer is always created, even for one master, so
     * `master_lb_enabled` is always true whatever the request says.
     * @default true
     */
    requireMasterLoadBalancer: z.boolean().default(true),
    /** Clusters per project when no quota row exists (Magnum's `max_clusters_per_project`). @default 20 */
    defaultClusterQuota: z.number().int().min(0).default(20),
    /** `create_timeout` (minutes) when a create does not give one. @default 60 */
    createTimeoutMinutes: z.number().int().min(0).default(60),
  })
  .strict();

/** The operator policy of a deployment. */
export type OperatorPolicy = z.infer<typeof OperatorPolicySchema>;

/** The user guide's policy: every default of {@link OperatorPolicySchema}. */
export const defaultPolicy: OperatorPolicy = Object.freeze(OperatorPolicySchema.parse({}));

/**
 * The required fields a cluster-create body lacks (absent, `null` or empty string), in the
 * policy's order.
 */
export function missingRequiredFields(
  policy: OperatorPolicy,
  body: Readonly<Record<string, unknown>>,
): RequiredCreateField[] {
  return policy.requiredCreateFields.filter((f) => {
    const v = body[f];
    return v === undefined || v === null || v === '';
  });
}

/** The `status_reason` of a cluster created without required fields: "Missing required fields: --master-flavor, --keypair". */
export function missingFieldsReason(fields: readonly RequiredCreateField[]): string {
  return `Missing required fields: ${fields.map((f) => CREATE_FIELD_OPTIONS[f]).join(', ')}`;
}

/** Why a master count is refused, or undefined when it is allowed. */
export function masterCountProblem(policy: OperatorPolicy, count: number): string | undefined {
  if (count < 1) return `master_count must be at least 1, got ${count}.`;
  if (policy.oddMasterCountOnly && count % 2 === 0) {
    return `Master nodegroup size of ${count} is invalid, size cannot be an even number: use an odd number of masters (1, 3 or 5), which keeps etcd's quorum.`;
  }
  return undefined;
}

/** Why a worker count for node group `nodeGroup` is refused, or undefined when it is allowed. */
export function nodeGroupSizeProblem(
  policy: OperatorPolicy,
  count: number,
  nodeGroup: string,
  what = 'node_count',
): string | undefined {
  const max = policy.maxNodesPerNodeGroup;
  if (max !== null && count > max) {
    return `The ${what} ${count} of node group ${nodeGroup} exceeds the limit of ${max} worker nodes per node group; create an additional node group (openstack coe nodegroup create) for more workers.`;
  }
  return undefined;
}

/** A Kubernetes version parsed from a `kube_tag` such as `v1.31.2`. */
export interface KubeVersion {
  major: number;
  minor: number;
  patch: number;
}

/** Parse `v1.31.2` / `1.31` / `v1.31.2-rc.1`; undefined when it is not a version. */
export function parseKubeTag(tag: string | null | undefined): KubeVersion | undefined {
  if (!tag) return undefined;
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$/.exec(tag.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: m[3] === undefined ? 0 : Number(m[3]) };
}

function compareKube(a: KubeVersion, b: KubeVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/**
 * Why an upgrade from `fromTag` to `toTag` is refused, or undefined when allowed: the target
 * must be known, not older than the current version, and at most one minor ahead (Kubernetes
 * supports upgrading the control plane one minor at a time). The same version is allowed
 * (re-applies the template). An unknown current version is not checked.
 */
export function upgradePathProblem(
  fromTag: string | null | undefined,
  toTag: string | null | undefined,
): string | undefined {
  const to = parseKubeTag(toTag);
  if (!to) {
    return `The target cluster template has no usable kube_tag label (got ${toTag ? `"${toTag}"` : 'none'}), so the Kubernetes version to upgrade to is unknown.`;
  }
  const from = parseKubeTag(fromTag);
  if (!from) return undefined;
  const cmp = compareKube(to, from);
  if (cmp < 0) {
    return `Upgrading from Kubernetes ${fromTag} to ${toTag} would go backwards; downgrades are not supported.`;
  }
  if (to.major !== from.major || to.minor > from.minor + 1) {
    return `Upgrading from Kubernetes ${fromTag} to ${toTag} skips a minor version; upgrade one minor version at a time (next: v${from.major}.${from.minor + 1}.x).`;
  }
  return undefined;
}
