import { CloudError, isNotFound, type CloudClients } from '../../cloud/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { cloudErrorMessage } from '../common/cloud-errors.ts';
import {
  CapiLabels,
  CapiTypes,
  type ClusterTemplateObject,
  type MagnumClusterObject,
  type NodeGroupObject,
} from '../../domain/index.ts';
import type { ControllerDeps } from '../deps.ts';
import { lookUpFlavor, lookUpImage, type Lookups } from '../common/lookups.ts';
import { keypairCopyName, legacyKeypairCopyName } from './magnum-names.ts';
import { flavorOf, imageOf } from './magnum-render.ts';

/**
 * Checks a Magnum cluster's references against the cloud before anything is built, so a
 * missing flavor, image, keypair or availability zone fails the operation at once with a
 * reason the user can act on, instead of leaving machines that can never start.
 */

/** Result: undefined when everything exists, else the reason. */
export type CheckResult = string | undefined;

/**
 * Check the template's and node groups' flavors and images and the availability zones. A flavor
 * or image found is taken from the project's shared lookups, which its machines then use too; a
 * miss is always asked again.
 */
export async function checkReferences(
  cloud: CloudClients,
  lookups: Lookups,
  cluster: MagnumClusterObject,
  template: ClusterTemplateObject,
  nodeGroups: readonly NodeGroupObject[],
): Promise<CheckResult> {
  const problems: string[] = [];
  const flavors = new Map<string, string>();
  for (const ng of nodeGroups) {
    const f = flavorOf(cluster, template, ng);
    if (!f) {
      problems.push(
        `node group ${ng.spec.name} has no flavor (pass ${ng.spec.role === 'master' ? '--master-flavor' : '--flavor'})`,
      );
      continue;
    }
    flavors.set(f, ng.spec.name);
  }
  for (const [f, ng] of flavors) {
    const found = await lookUpFlavor(lookups, cloud, cluster.metadata.namespace, f);
    if (found === undefined)
      problems.push(`Unable to find flavor ${f} (node group ${ng}); see openstack flavor list`);
    else if (found === 'ambiguous')
      problems.push(`More than one flavor is named ${f} (node group ${ng}); use its id`);
  }
  const images = new Set(nodeGroups.map((ng) => imageOf(template, ng)));
  for (const img of images) {
    const found = await lookUpImage(lookups, cloud, cluster.metadata.namespace, img);
    if (found === undefined) problems.push(`Image ${img} could not be found; see openstack image list`);
    else if (found === 'ambiguous') problems.push(`More than one image is named ${img}; use its id`);
  }
  const zones = new Set(
    nodeGroups
      .map((ng) => ng.spec.labels.availability_zone ?? cluster.spec.labels.availability_zone)
      .filter((z): z is string => !!z),
  );
  if (zones.size > 0) {
    const known = (await cloud.compute.listAvailabilityZones()).filter((z) => z.available).map((z) => z.name);
    for (const z of zones) {
      if (!known.includes(z))
        problems.push(`Availability zone ${z} does not exist (available: ${known.join(', ')})`);
    }
  }
  return problems.length > 0 ? problems.join('; ') : undefined;
}

/**
 * Make sure the servers can carry the user's SSH key: the keypair belongs to the user who
 * created the cluster (Nova keypairs are per user), so Magnetar's service identity keeps a
 * copy of its public key, one per user and keypair name ({@link keypairCopyName}), shared by
 * that user's clusters and removed with the last of them. A copy whose key no longer matches
 * the user's (the keypair was re-created) is replaced. Missing user keypair → the reason.
 */
export async function ensureKeypairCopy(
  deps: ControllerDeps,
  cloud: CloudClients,
  cluster: MagnumClusterObject,
  template: ClusterTemplateObject,
): Promise<CheckResult> {
  const name = cluster.spec.keypair ?? template.spec.keypairId;
  const copy = keypairCopyName(cluster, template);
  if (!name || !copy) return undefined;
  const lookup = deps.userKeypair;
  const publicKey = lookup
    ? await lookup(cluster.metadata.namespace, cluster.spec.userId, name)
    : await ownKeypair(cloud, name);
  if (publicKey === undefined) {
    return `Unable to find keypair ${name} of the user who creates the cluster; create it with openstack keypair create, or pass another --keypair`;
  }
  const current = await ownKeypair(cloud, copy);
  if (current?.trim() === publicKey.trim()) return undefined;
  if (current !== undefined) await cloud.compute.deleteKeypair(copy).catch(ignoreNotFound);
  try {
    await cloud.compute.createKeypair({ name: copy, publicKey });
  } catch (err) {
    // Created meanwhile by a concurrent reconcile: fine.
    if (err instanceof Error && /already exists/i.test(err.message)) return undefined;
    if (err instanceof CloudError && err.kind === 'quota') {
      return `Magnetar's service identity cannot store another keypair (${cloudErrorMessage(err)}); the operator can raise its key-pair quota (openstack quota set --key-pairs)`;
    }
    throw err;
  }
  return undefined;
}

function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}

async function ownKeypair(cloud: CloudClients, name: string): Promise<string | undefined> {
  try {
    return (await cloud.compute.getKeypair(name)).publicKey;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * After a cluster's objects are gone: remove its keypair copy when no other cluster (in any
 * project: the copies belong to the one service identity) still uses it, and the per-cluster
 * copy of earlier versions.
 */
export async function releaseKeypairCopy(
  store: ObjectStore,
  cloud: CloudClients,
  cluster: MagnumClusterObject,
  template: ClusterTemplateObject | undefined,
  capi: string,
): Promise<void> {
  await cloud.compute.deleteKeypair(legacyKeypairCopyName(capi)).catch(ignoreNotFound);
  const copy = keypairCopyName(cluster, template);
  if (!copy) return;
  const users = await store.list(CapiTypes.Cluster, {
    labelSelector: [{ key: CapiLabels.keypairCopy, operator: 'In', values: [copy] }],
    limit: 2,
  });
  if (
    users.items.some((c) => c.metadata.name !== capi || c.metadata.namespace !== cluster.metadata.namespace)
  )
    return;
  await cloud.compute.deleteKeypair(copy).catch(ignoreNotFound);
}
