import { stringify } from 'yaml';

/** What a client-certificate kubeconfig holds. */
export interface KubeconfigParams {
  /** Name of the cluster entry (the CAPI cluster name). */
  clusterName: string;
  /** API server URL, e.g. `https://127.0.0.1:6443`. */
  server: string;
  caPem: string;
  /** User entry name. @default `<clusterName>-admin` */
  userName?: string;
  certPem: string;
  keyPem: string;
}

const b64 = (pem: string) => Buffer.from(pem.endsWith('\n') ? pem : pem + '\n', 'utf8').toString('base64');

/**
 * A kubeconfig (YAML) in the layout Cluster API writes to `<cluster>-kubeconfig`: cluster,
 * user `<cluster>-admin`, context `<user>@<cluster>`, data embedded as base64.
 */
export function renderKubeconfig(p: KubeconfigParams): string {
  const user = p.userName ?? `${p.clusterName}-admin`;
  const context = `${user}@${p.clusterName}`;
  return stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: p.clusterName, cluster: { server: p.server, 'certificate-authority-data': b64(p.caPem) } },
      ],
      contexts: [{ name: context, context: { cluster: p.clusterName, user } }],
      'current-context': context,
      preferences: {},
      users: [
        { name: user, user: { 'client-certificate-data': b64(p.certPem), 'client-key-data': b64(p.keyPem) } },
      ],
    },
    { lineWidth: 0 },
  );
}
