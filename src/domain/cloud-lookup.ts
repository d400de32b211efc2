import type { AuthContext } from './auth.ts';

/**
 * Look-ups of OpenStack resources that the Magnum façade validates at request time
 * (Magnum checks image, flavors, keypair and networks before accepting a template or
 * cluster). Implemented in the server wiring over the OpenStack client library, against
 * the embedded cloud or a real one; calls are made with the caller's token so that per-user
 * resources (Nova keypairs) resolve as the caller sees them.
 *
 * Each `find*` returns the match, `'ambiguous'` when a name matches several resources
 * (Magnum answers 409), or undefined when nothing matches.
 */
export interface CloudLookup {
  findImage(auth: AuthContext, nameOrId: string): Promise<ImageInfo | 'ambiguous' | undefined>;
  findFlavor(auth: AuthContext, nameOrId: string): Promise<FlavorInfo | 'ambiguous' | undefined>;
  findKeypair(auth: AuthContext, name: string): Promise<KeypairInfo | undefined>;
  findNetwork(auth: AuthContext, nameOrId: string): Promise<NetworkInfo | 'ambiguous' | undefined>;
  findSubnet(auth: AuthContext, nameOrId: string): Promise<SubnetInfo | 'ambiguous' | undefined>;
  /** Availability zones of the compute service, in name order. */
  availabilityZones(auth: AuthContext): Promise<string[]>;
}

export interface ImageInfo {
  id: string;
  name: string;
  /** Glance property `os_distro`; Magnum refuses images without it. */
  osDistro?: string;
  osAdminUser?: string;
  properties: Record<string, string>;
}

export interface FlavorInfo {
  id: string;
  name: string;
  vcpus: number;
  ramMb: number;
  diskGb: number;
}

export interface KeypairInfo {
  name: string;
  publicKey: string;
  fingerprint?: string;
}

export interface NetworkInfo {
  id: string;
  name: string;
  external: boolean;
}

export interface SubnetInfo {
  id: string;
  name: string;
  networkId: string;
  cidr: string;
}
