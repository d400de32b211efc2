import { isNotFound, type CloudClients } from '../../cloud/index.ts';
import type { ClusterTemplateObject, MagnumClusterObject, NodeGroupObject } from '../../domain/index.ts';
import type { ControllerDeps } from '../deps.ts';
import { keypairCopyName } from './magnum-names.ts';
import { flavorOf, imageOf } from './magnum-render.ts';

/**
 * Checks a Magnum cluster's references against the cloud before anything is built, so a
 * missing flavor, image, keypair or availability zone fails the operation at once with a
 * reason the user can act on, instead of leaving machines that can never start.
 */

/** Result: undefined when everything exists, else the reason. */
export type CheckResult = string | undefined;

/** Check the template's and node groups' flavors and images and the availability zones. */
export async function checkReferences(
  cloud: CloudClients,
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
    const found = await cloud.compute.findFlavor(f);
    if (found === undefined)
      problems.push(`Unable to find flavor ${f} (node group ${ng}); see openstack flavor list`);
    else if (found === 'ambiguous')
      problems.push(`More than one flavor is named ${f} (node group ${ng}); use its id`);
  }
  const images = new Set(nodeGroups.map((ng) => imageOf(template, ng)));
  for (const img of images) {
    const found = await cloud.image.findImage(img);
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
 * copy of its public key under a name of its own (`magnetar-<cluster>`), removed with the
 * cluster. Missing user keypair → the reason.
 */
export async function ensureKeypairCopy(
  deps: ControllerDeps,
  cloud: CloudClients,
  cluster: MagnumClusterObject,
  template: ClusterTemplateObject,
  capi: string,
): Promise<CheckResult> {
  const name = cluster.spec.keypair ?? template.spec.keypairId;
  if (!name) return undefined;
  const copy = keypairCopyName(capi);
  try {
    await cloud.compute.getKeypair(copy);
    return undefined;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const lookup = deps.userKeypair;
  const publicKey = lookup
    ? await lookup(cluster.metadata.namespace, cluster.spec.userId, name)
    : await ownKeypair(cloud, name);
  if (publicKey === undefined) {
    return `Unable to find keypair ${name} of the user who creates the cluster; create it with openstack keypair create, or pass another --keypair`;
  }
  try {
    await cloud.compute.createKeypair({ name: copy, publicKey });
  } catch (err) {
    // Created meanwhile by a concurrent reconcile: fine.
    if (!(err instanceof Error && /already exists/i.test(err.message))) throw err;
  }
  return undefined;
}

async function ownKeypair(cloud: CloudClients, name: string): Promise<string | undefined> {
  try {
    return (await cloud.compute.getKeypair(name)).publicKey;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Remove the keypair copy of a deleted cluster. */
export async function deleteKeypairCopy(cloud: CloudClients, capi: string): Promise<void> {
  try {
    await cloud.compute.deleteKeypair(keypairCopyName(capi));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}
