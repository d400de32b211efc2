import { ConflictError, InputError, NotFoundError, type CloudLookup } from '../../domain/index.ts';
import type { Caller } from './context.ts';

/**
 * Magnum's checks of the OpenStack resources a template or cluster names (its
 * `attr_validator`), made with the caller's token so per-user resources (keypairs) resolve
 * as the caller sees them. Skipped when no cloud look-up is wired.
 */

export interface ResourceRefs {
  image?: string | null;
  flavor?: string | null;
  masterFlavor?: string | null;
  keypair?: string | null;
  externalNetwork?: string | null;
  fixedNetwork?: string | null;
  fixedSubnet?: string | null;
}

/** What the checks learned. */
export interface ResourceFacts {
  /** The image's `os_distro` (Magnum's `cluster_distro`). */
  osDistro?: string;
  /** The image's `magnum_driver` property, if any. */
  driver?: string;
}

function ambiguous(kind: string, name: string): ConflictError {
  return new ConflictError(
    `Multiple ${kind}s exist with same name ${name}: please use the ${kind} id instead.`,
    { code: 'Conflict' },
  );
}

/** Check every named resource; the first problem is thrown with Magnum's status and wording. */
export async function checkResources(
  cloud: CloudLookup | undefined,
  caller: Caller,
  refs: ResourceRefs,
): Promise<ResourceFacts> {
  const facts: ResourceFacts = {};
  if (!cloud) return facts;
  const auth = caller.auth;
  if (refs.image) {
    const img = await cloud.findImage(auth, refs.image);
    if (img === 'ambiguous') throw ambiguous('image', refs.image);
    if (!img) throw new InputError(`Image ${refs.image} could not be found.`, { code: 'ImageNotFound' });
    if (!img.osDistro) {
      throw new InputError(
        `Image ${refs.image} doesn't contain os_distro field. Set the image property os_distro (e.g. ubuntu or fedora-coreos) or choose another image.`,
        { code: 'OSDistroFieldNotFound' },
      );
    }
    facts.osDistro = img.osDistro;
    const driver = img.properties.magnum_driver;
    if (driver) facts.driver = driver;
  }
  // the same flavor for masters and workers (the usual case) is looked up once
  for (const flavor of new Set([refs.flavor, refs.masterFlavor])) {
    if (!flavor) continue;
    const f = await cloud.findFlavor(auth, flavor);
    if (f === 'ambiguous') throw ambiguous('flavor', flavor);
    if (!f) throw new InputError(`Unable to find flavor ${flavor}.`, { code: 'FlavorNotFound' });
  }
  if (refs.keypair) {
    const k = await cloud.findKeypair(auth, refs.keypair);
    if (!k) {
      throw new NotFoundError(
        `Unable to find keypair ${refs.keypair}: keypairs belong to a user, so create it with "openstack keypair create" as the user who creates the cluster.`,
        {
          code: 'KeyPairNotFound',
        },
      );
    }
  }
  if (refs.externalNetwork) {
    const n = await cloud.findNetwork(auth, refs.externalNetwork);
    if (n === 'ambiguous') throw ambiguous('external network', refs.externalNetwork);
    if (!n || !n.external)
      throw new InputError(`Unable to find external network ${refs.externalNetwork}.`, {
        code: 'ExternalNetworkNotFound',
      });
  }
  if (refs.fixedNetwork) {
    const n = await cloud.findNetwork(auth, refs.fixedNetwork);
    if (n === 'ambiguous') throw ambiguous('fixed network', refs.fixedNetwork);
    if (!n)
      throw new InputError(`Unable to find fixed network ${refs.fixedNetwork}.`, {
        code: 'FixedNetworkNotFound',
      });
  }
  if (refs.fixedSubnet) {
    const s = await cloud.findSubnet(auth, refs.fixedSubnet);
    if (s === 'ambiguous') throw ambiguous('fixed subnet', refs.fixedSubnet);
    if (!s)
      throw new InputError(`Unable to find fixed subnet ${refs.fixedSubnet}.`, {
        code: 'FixedSubnetNotFound',
      });
  }
  return facts;
}
