import { stringify } from 'yaml';

/**
 * The kubeconfig of the management API: server `<base>/k8s`, the caller's project as the
 * context's namespace, and a user that gets its token from `coe management token` (an exec
 * credential plugin), so the file holds no secret.
 */

/** What the kubeconfig needs. */
export interface ManagementKubeconfigParams {
  /** `<base>/k8s`. */
  server: string;
  /** CA of the server's certificate (embedded as certificate-authority-data). @default system CAs */
  caPem?: string;
  /** Namespace of the context (the project id). */
  namespace: string;
  /** User entry name, e.g. the identity user name. */
  userName: string;
  /** Command of the exec plugin. @default coe */
  command?: string;
  /** Arguments of the exec plugin. @default ['management', 'token'] */
  args?: string[];
  /** Environment of the exec plugin (e.g. OS_CLOUD). @default none */
  env?: Record<string, string>;
}

/** Name of the cluster entry. */
export const MANAGEMENT_CLUSTER_NAME = 'magnetar';

/** The kubeconfig as an object (YAML via {@link renderManagementKubeconfig}). */
export function managementKubeconfig(p: ManagementKubeconfigParams) {
  const context = `${p.userName}@${MANAGEMENT_CLUSTER_NAME}`;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: MANAGEMENT_CLUSTER_NAME,
        cluster: {
          server: p.server,
          ...(p.caPem
            ? { 'certificate-authority-data': Buffer.from(p.caPem, 'utf8').toString('base64') }
            : {}),
        },
      },
    ],
    contexts: [
      {
        name: context,
        context: { cluster: MANAGEMENT_CLUSTER_NAME, user: p.userName, namespace: p.namespace },
      },
    ],
    'current-context': context,
    preferences: {},
    users: [
      {
        name: p.userName,
        user: {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: p.command ?? 'coe',
            args: p.args ?? ['management', 'token'],
            ...(p.env && Object.keys(p.env).length > 0
              ? { env: Object.entries(p.env).map(([name, value]) => ({ name, value })) }
              : {}),
            interactiveMode: 'Never',
            provideClusterInfo: false,
          },
        },
      },
    ],
  };
}

/** The kubeconfig as YAML. */
export function renderManagementKubeconfig(p: ManagementKubeconfigParams): string {
  return stringify(managementKubeconfig(p), { lineWidth: 0 });
}
