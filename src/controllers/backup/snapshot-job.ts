/**
 * On a real cluster a snapshot is taken by a short-lived Job, not over ssh: pinned to a
 * control-plane node, with the kubeadm etcd client certificates from the host, it runs
 * `etcdctl snapshot save` and `etcdutl snapshot status`, and hands the file to Magnetar, which
 * encrypts and uploads it. This renders that Job; this version does not run it (the embedded
 * cloud's emulated control planes produce their snapshots directly) — see the ADR.
 */

/** Inputs of {@link etcdSnapshotJob}. */
export interface SnapshotJobInput {
  /** Backup store name (names the Job). */
  backupName: string;
  /** etcd image, e.g. `registry.k8s.io/etcd:3.5.16-0`. */
  etcdImage: string;
  /** Seconds after which the finished Job is garbage collected. @default 600 */
  ttlSecondsAfterFinished?: number;
}

/** The Job manifest (batch/v1) that would take the snapshot of a kubeadm cluster. */
export function etcdSnapshotJob(input: SnapshotJobInput): Record<string, unknown> {
  const file = '/var/lib/etcd-snapshots/snapshot.db';
  const flags = [
    '--endpoints=https://127.0.0.1:2379',
    '--cacert=/etc/kubernetes/pki/etcd/ca.crt',
    '--cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt',
    '--key=/etc/kubernetes/pki/etcd/healthcheck-client.key',
  ].join(' ');
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: `etcd-snapshot-${input.backupName}`.slice(0, 63).replace(/-+$/, ''),
      namespace: 'kube-system',
      labels: { 'app.kubernetes.io/managed-by': 'magnetar', 'backup.magnetar.io/backup': input.backupName },
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: 600,
      ttlSecondsAfterFinished: input.ttlSecondsAfterFinished ?? 600,
      template: {
        spec: {
          restartPolicy: 'Never',
          hostNetwork: true,
          nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
          tolerations: [
            { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
          ],
          containers: [
            {
              name: 'snapshot',
              image: input.etcdImage,
              command: [
                '/bin/sh',
                '-ec',
                `etcdctl ${flags} snapshot save ${file} && etcdutl snapshot status ${file} --write-out=json`,
              ],
              volumeMounts: [
                { name: 'etcd-certs', mountPath: '/etc/kubernetes/pki/etcd', readOnly: true },
                { name: 'snapshots', mountPath: '/var/lib/etcd-snapshots' },
              ],
            },
          ],
          volumes: [
            { name: 'etcd-certs', hostPath: { path: '/etc/kubernetes/pki/etcd', type: 'Directory' } },
            { name: 'snapshots', emptyDir: {} },
          ],
        },
      },
    },
  };
}
