import { isIP } from 'node:net';
import {
  CapiAnnotations,
  CapiTypes,
  ConflictError,
  type CapiClusterObject,
  type Logger,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { pkiRefOf } from '../client/workload-access.ts';
import type { StorePki } from '../pki/store-pki.ts';
import { handleRequest } from './api/router.ts';
import type { EmulatedCluster } from './emulated-cluster.ts';
import { ClusterListener, type EndpointTls, type SharedHttpEngine } from './listener.ts';

/**
 * The emulated API endpoint of a cluster ("kubeadm init ran"): a loopback port with a server
 * certificate from the cluster CA, announced in the CAPI Cluster's
 * `workload.magnetar.io/endpoint` annotation, re-certified when the CA rotates.
 */
export class Endpoints {
  constructor(
    private readonly store: ObjectStore,
    private readonly pki: StorePki,
    private readonly host: string,
    private readonly log: Logger,
    /** The shared HTTP engine while the emulator is active. */
    private readonly engine: () => SharedHttpEngine | undefined,
  ) {}

  private async issue(emu: EmulatedCluster): Promise<{ tls: EndpointTls; caVersion: string; host: string }> {
    const host = emu.capi.spec.controlPlaneEndpoint?.host ?? '';
    const domain = emu.capi.spec.clusterNetwork?.serviceDomain ?? 'cluster.local';
    const dnsNames = [
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      `kubernetes.default.svc.${domain}`,
    ];
    const ips = ['127.0.0.1'];
    if (host !== '') {
      if (isIP(host)) ips.push(host);
      else dnsNames.push(host);
    }
    const issued = await this.pki.issueServerCertificate(pkiRefOf(emu.capi), { dnsNames, ips });
    return {
      tls: { certPem: issued.certPem, keyPem: issued.keyPem, caPem: issued.caPem },
      caVersion: issued.caVersion,
      host,
    };
  }

  /** Re-issue the endpoint certificate when the CA was rotated or the endpoint host changed. */
  async refresh(emu: EmulatedCluster): Promise<void> {
    const caVersion = await this.pki.currentCaVersion(emu.capi.metadata);
    const host = emu.capi.spec.controlPlaneEndpoint?.host ?? '';
    if (!emu.tlsFor || !caVersion || (caVersion === emu.tlsFor.caVersion && host === emu.tlsFor.host)) return;
    const next = await this.issue(emu);
    emu.listener?.updateTls(next.tls);
    emu.tlsFor = { caVersion: next.caVersion, caPem: next.tls.caPem, host: next.host };
    this.log.info(
      { cluster: emu.key },
      'emulated workload API: new certificates (CA rotated or endpoint changed)',
    );
  }

  /** "kubeadm init ran": serve the cluster's API and announce it on the CAPI Cluster. */
  async ensure(emu: EmulatedCluster): Promise<void> {
    const engine = this.engine();
    if (emu.listener || !engine) return;
    const next = await this.issue(emu);
    const listener = new ClusterListener(
      engine,
      next.tls,
      (req, res) => void handleRequest(emu, req, res),
      this.log,
    );
    const previous = previousPort(emu.capi, this.host);
    const port = await listener.listen(this.host, previous);
    emu.listener = listener;
    emu.tlsFor = { caVersion: next.caVersion, caPem: next.tls.caPem, host: next.host };
    const url = `https://${this.host}:${port}`;
    await this.annotate(emu, url);
    this.log.info({ cluster: emu.key, endpoint: url }, 'emulated workload API serving (kubeadm init)');
  }

  private async annotate(emu: EmulatedCluster, url: string): Promise<void> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const cur = await this.store.get<CapiClusterObject>(CapiTypes.Cluster, emu.namespace, emu.name);
      if (!cur || cur.metadata.annotations[CapiAnnotations.workloadEndpoint] === url) return;
      try {
        await this.store.update({
          ...cur,
          metadata: {
            ...cur.metadata,
            annotations: { ...cur.metadata.annotations, [CapiAnnotations.workloadEndpoint]: url },
          },
        });
        return;
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
    }
    throw new ConflictError(`could not record the endpoint of ${emu.key}: the Cluster keeps changing`);
  }
}

/** The port of a previous run, when the endpoint annotation points at this host. */
function previousPort(capi: CapiClusterObject, host: string): number | undefined {
  const url = capi.metadata.annotations[CapiAnnotations.workloadEndpoint];
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return u.hostname === host && u.port !== '' ? Number(u.port) : undefined;
  } catch {
    return undefined;
  }
}
