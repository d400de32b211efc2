/**
 * The kubeconfig `cluster config` writes, in the same layout as the `openstack` client:
 * context `default`, user `admin`, base64 (standard, one line) CA, client certificate and key.
 */

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** What the certificate form needs. */
export interface KubeconfigInput {
  clusterName: string;
  /** The cluster's `api_address`, e.g. `https://10.0.0.5:6443`. */
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** Kubeconfig authenticating with the signed admin certificate. */
export function certificateKubeconfig(i: KubeconfigInput): string {
  return [
    'apiVersion: v1',
    'clusters:',
    '- cluster:',
    `    certificate-authority-data: ${b64(i.caPem)}`,
    `    server: ${i.server}`,
    `  name: ${i.clusterName}`,
    'contexts:',
    '- context:',
    `    cluster: ${i.clusterName}`,
    '    user: admin',
    '  name: default',
    'current-context: default',
    'kind: Config',
    'preferences: {}',
    'users:',
    '- name: admin',
    '  user:',
    `    client-certificate-data: ${b64(i.certPem)}`,
    `    client-key-data: ${b64(i.keyPem)}`,
    '',
  ].join('\n');
}

/**
 * Kubeconfig authenticating with the OpenStack token in `$OS_TOKEN` through an exec
 * credential plugin (`--use-keystone`).
 */
export function keystoneKubeconfig(i: Pick<KubeconfigInput, 'clusterName' | 'server' | 'caPem'>): string {
  return [
    'apiVersion: v1',
    'clusters:',
    '- cluster:',
    `    certificate-authority-data: ${b64(i.caPem)}`,
    `    server: ${i.server}`,
    `  name: ${i.clusterName}`,
    'contexts:',
    '- context:',
    `    cluster: ${i.clusterName}`,
    '    user: openstackuser',
    '  name: openstackuser@kubernetes',
    'current-context: openstackuser@kubernetes',
    'kind: Config',
    'preferences: {}',
    'users:',
    '- name: openstackuser',
    '  user:',
    '    exec:',
    '      command: /bin/bash',
    '      apiVersion: client.authentication.k8s.io/v1beta1',
    '      interactiveMode: Never',
    '      args:',
    '      - -c',
    '      - >',
    '        if [ -z "${OS_TOKEN}" ]; then',
    "            echo 'Error: Missing OpenStack credential from environment variable $OS_TOKEN' > /dev/stderr",
    '            exit 1',
    '        else',
    `            echo '{ "apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "status": { "token": "'"\${OS_TOKEN}"'"}}'`,
    '        fi',
    '',
  ].join('\n');
}

/** Kubeconfig of a cluster without TLS: only the server, no credentials. */
export function insecureKubeconfig(i: Pick<KubeconfigInput, 'clusterName' | 'server'>): string {
  return [
    'apiVersion: v1',
    'clusters:',
    '- cluster:',
    `    server: ${i.server}`,
    `  name: ${i.clusterName}`,
    'contexts:',
    '- context:',
    `    cluster: ${i.clusterName}`,
    `    user: ${i.clusterName}`,
    `  name: ${i.clusterName}`,
    `current-context: ${i.clusterName}`,
    'kind: Config',
    'preferences: {}',
    'users:',
    `- name: ${i.clusterName}`,
    '',
  ].join('\n');
}
