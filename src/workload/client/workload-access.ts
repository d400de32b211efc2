import { CapiAnnotations, type ApiObject, type Clock, type PkiClusterRef } from '../../domain/index.ts';
import type { ClientTlsOptions } from '../pki/store-pki.ts';
import { WorkloadClient } from './workload-client.ts';

/**
 * Access to workload clusters: a {@link WorkloadClient} for a CAPI Cluster once its API
 * endpoint is known, authenticated with a cluster-admin client certificate from the
 * cluster PKI.
 */

/** The part of the PKI access needs. */
export interface ClientCredentialSource {
  clientTlsOptions(cluster: PkiClusterRef): Promise<ClientTlsOptions>;
  /** Changes when the cluster's CA does (a rotation): certificates issued before are refused then. */
  caVersion(cluster: PkiClusterRef): Promise<string>;
}

/** Options of {@link WorkloadAccess}. */
export interface WorkloadAccessOptions {
  pki: ClientCredentialSource;
  clock: Clock;
  /** Per-request timeout. @default 10000 */
  timeoutMs?: number;
  /** Pause between drain passes. @default 5000 */
  drainRetryMs?: number;
}

interface CapiClusterLike {
  metadata: { namespace: string; name: string; annotations?: Record<string, string> };
  spec?: { controlPlaneEndpoint?: { host?: string; port?: number } } | Record<string, unknown>;
}

/**
 * The URL of a cluster's API: the emulator's `workload.magnetar.io/endpoint` annotation when
 * present, else `https://<spec.controlPlaneEndpoint.host>:<port>`; undefined before either exists.
 */
export function workloadEndpointOf(cluster: CapiClusterLike): string | undefined {
  const annotated = cluster.metadata.annotations?.[CapiAnnotations.workloadEndpoint];
  if (annotated) return annotated;
  const ep = (cluster.spec as { controlPlaneEndpoint?: { host?: unknown; port?: unknown } } | undefined)
    ?.controlPlaneEndpoint;
  if (!ep || typeof ep.host !== 'string' || ep.host === '') return undefined;
  const port = typeof ep.port === 'number' && ep.port > 0 ? ep.port : 6443;
  const host = ep.host.includes(':') && !ep.host.startsWith('[') ? `[${ep.host}]` : ep.host;
  return `https://${host}:${port}`;
}

/** The PKI reference of a CAPI Cluster. */
export function pkiRefOf(cluster: CapiClusterLike): PkiClusterRef {
  return {
    namespace: cluster.metadata.namespace,
    name: cluster.metadata.name,
    displayName: cluster.metadata.annotations?.[CapiAnnotations.displayName] ?? cluster.metadata.name,
  };
}

/**
 * Clients of workload clusters, reused while the endpoint and the cluster's CA stay the same
 * (a client certificate the PKI issues again, say after its cache let the first one go, does
 * not replace a client whose certificate is still good); a replaced client's connection is
 * closed.
 */
export class WorkloadAccess {
  private readonly options: WorkloadAccessOptions;
  private readonly clients = new Map<
    string,
    { endpoint: string; caVersion: string; client: WorkloadClient }
  >();

  constructor(options: WorkloadAccessOptions) {
    this.options = options;
  }

  /** A client of the cluster's API, or undefined while it has no endpoint. */
  async forCluster(capiCluster: ApiObject): Promise<WorkloadClient | undefined> {
    const endpoint = workloadEndpointOf(capiCluster);
    if (!endpoint) return undefined;
    const ref = pkiRefOf(capiCluster);
    const caVersion = await this.options.pki.caVersion(ref);
    const key = `${capiCluster.metadata.namespace}/${capiCluster.metadata.name}`;
    const hit = this.clients.get(key);
    if (hit && hit.endpoint === endpoint && hit.caVersion === caVersion) return hit.client;
    const tls = await this.options.pki.clientTlsOptions(ref);
    const client = new WorkloadClient({
      server: endpoint,
      tls,
      clock: this.options.clock,
      ...(this.options.timeoutMs ? { timeoutMs: this.options.timeoutMs } : {}),
      ...(this.options.drainRetryMs ? { drainRetryMs: this.options.drainRetryMs } : {}),
    });
    // The replaced client's kept-alive connection would otherwise stay open until it idles out.
    hit?.client.close();
    this.clients.delete(key);
    this.clients.set(key, { endpoint, caVersion, client });
    while (this.clients.size > 4096) {
      const oldest = this.clients.keys().next().value!;
      this.clients.get(oldest)?.client.close();
      this.clients.delete(oldest);
    }
    return client;
  }
}
