import {
  bootstrapCommandOf,
  bootstrapTokenOf,
  CapiLabels,
  CapiTypes,
  secretValue,
  type MachineObject,
  type SecretObject,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import type { BootPlan } from './emulated-cluster.ts';
import type { PersistedObjects } from './persisted-objects.ts';

/**
 * What a booted machine's cloud-init would make it do, read from its bootstrap data Secret:
 * `kubeadm init` (first control-plane machine) or `kubeadm join` with the bootstrap token
 * of its JoinConfiguration. The format is the one the kubeadm bootstrap controller renders
 * (see `bootstrapCommandOf` / `bootstrapTokenOf` in the domain).
 */
export async function bootPlanOf(
  store: ObjectStore,
  m: MachineObject,
  apiUp: boolean,
): Promise<BootPlan | undefined> {
  const secretName = m.spec.bootstrap?.dataSecretName;
  if (!secretName) return { kind: 'none', reason: 'the machine has no bootstrap data' };
  const secret = await store.get<SecretObject>(CapiTypes.Secret, m.metadata.namespace, secretName);
  const data = secretValue(secret);
  // Not cached: the Secret may appear later.
  if (data === undefined) return undefined;
  const command = bootstrapCommandOf(data);
  const token = bootstrapTokenOf(data);
  switch (command) {
    case 'init':
      return { kind: 'init' };
    case 'join':
      return token ? { kind: 'join', token } : { kind: 'join' };
    case undefined: {
      // Bootstrap data in another format: the first control-plane machine initializes, others join.
      const controlPlane = CapiLabels.controlPlane in m.metadata.labels;
      if (controlPlane && !apiUp) return { kind: 'init' };
      return token ? { kind: 'join', token } : { kind: 'join' };
    }
  }
}

/** Why a kubelet presenting `token` would be refused by the cluster, or undefined when the token is good. */
export async function tokenProblem(
  persisted: PersistedObjects,
  token: string | undefined,
  nowMs: number,
): Promise<string | undefined> {
  if (!token) return 'the bootstrap data carries no join token';
  const [id, secret] = token.split('.') as [string, string];
  const s = await persisted.get('Secret', 'kube-system', `bootstrap-token-${id}`);
  if (!s) return `bootstrap token ${id} does not exist in the cluster`;
  const data = (s.data ?? {}) as Record<string, string>;
  const value = (k: string) =>
    data[k] === undefined ? undefined : Buffer.from(data[k], 'base64').toString('utf8');
  if (s.type !== 'bootstrap.kubernetes.io/token')
    return `secret bootstrap-token-${id} is not a bootstrap token`;
  if (value('token-secret') !== secret) return `bootstrap token ${id} does not match`;
  if (value('usage-bootstrap-authentication') !== 'true')
    return `bootstrap token ${id} may not be used for authentication`;
  const expiration = value('expiration');
  if (expiration !== undefined && !(Date.parse(expiration) > nowMs))
    return `bootstrap token ${id} expired at ${expiration}`;
  return undefined;
}
