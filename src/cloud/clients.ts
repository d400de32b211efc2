import { NovaComputeClient, type ComputeClient } from './compute-client.ts';
import { OctaviaLoadBalancerClient } from './load-balancer-client.ts';
import type { LoadBalancerClient } from './load-balancer-types.ts';
import { NeutronNetworkClient } from './network-client.ts';
import type { NetworkClient } from './network-types.ts';
import { GlanceImageClient, type ImageClient } from './image-client.ts';
import { SwiftObjectStoreClient, type ObjectStoreClient } from './object-store-client.ts';
import type { Session } from './session.ts';
import { CinderVolumeClient, type VolumeClient } from './volume-client.ts';

/** One narrow client per OpenStack service, all over the same session. */
export interface CloudClients {
  compute: ComputeClient;
  network: NetworkClient;
  loadBalancer: LoadBalancerClient;
  volume: VolumeClient;
  image: ImageClient;
  objectStore: ObjectStoreClient;
}

/** Options of {@link createCloudClients}. */
export interface CloudClientsOptions {
  /** Compute microversion. @default COMPUTE_MICROVERSION (2.53) */
  computeMicroversion?: string;
}

/** The typed clients for a session (cheap: no call is made until a method is used). */
export function createCloudClients(session: Session, options: CloudClientsOptions = {}): CloudClients {
  return {
    compute: new NovaComputeClient(
      session,
      options.computeMicroversion ? { microversion: options.computeMicroversion } : {},
    ),
    network: new NeutronNetworkClient(session),
    loadBalancer: new OctaviaLoadBalancerClient(session),
    volume: new CinderVolumeClient(session),
    image: new GlanceImageClient(session),
    objectStore: new SwiftObjectStoreClient(session),
  };
}
