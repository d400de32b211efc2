import { randomBytes } from 'node:crypto';
import {
  BOOTSTRAP_API_VERSION,
  CAPI_SECRET_TYPE,
  CapiConditions,
  CapiLabels,
  CapiReasons,
  CapiAnnotations,
  CapiTypes,
  bootstrapTokenOf,
  secretValue,
  type ApiObject,
  type CapiClusterObject,
  type KubeadmConfigObject,
  type KubeadmConfigStatus,
  type MachineObject,
  type SecretObject,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { buildConditions, falseCondition, trueCondition, unknownCondition } from '../common/conditions.ts';
import { getCapiCluster, isPaused, workloadClient, type Env } from '../common/env.ts';
import type { ObjectRef, ReconcileContext, ReconcileResult, Reconciler } from '../common/runtime-types.ts';
import {
  controllerOf,
  deleteObject,
  ensureFinalizer,
  isAlreadyExists,
  iso,
  ownerRef,
  removeFinalizer,
  writeStatus,
} from '../common/writes.ts';
import { renderCloudInit, type BootstrapRole, type PkiFile } from './cloud-init.ts';
import { clusterForMembers, specView, specViewExcept } from '../common/views.ts';

/** Finalizer Magnetar keeps on KubeadmConfigs so their data Secret is removed with them. */
export const KUBEADM_CONFIG_FINALIZER = 'kubeadmconfig.bootstrap.cluster.x-k8s.io';

/**
 * The kubeadm bootstrap controller: renders each machine's cloud-init into a Secret named after
 * its KubeadmConfig (key `value`), as Cluster API's kubeadm bootstrap provider does. The first
 * control-plane machine gets `kubeadm init` with the cluster's CAs; other machines wait until
 * the control plane is initialized, get a fresh bootstrap token created in the workload
 * cluster, and `kubeadm join` with it (control-plane joins also carry the CAs). The token is
 * refreshed while the machine has not joined.
 */
export function kubeadmConfigReconciler(env: Env): Reconciler {
  return {
    name: 'kubeadmconfig',
    // its own status is derived from other objects each time: its own status writes need no second pass
    view: specView,
    type: CapiTypes.KubeadmConfig,
    watches: [
      {
        type: CapiTypes.Machine,
        // the provider ID and the data Secret's name the Machine copies from its infrastructure and from here
        view: specViewExcept('providerID', 'bootstrap.dataSecretName'),
        map: (obj: ApiObject) => {
          const ref = (obj as MachineObject).spec.bootstrap?.configRef;
          return ref && ref.kind === 'KubeadmConfig'
            ? [{ namespace: obj.metadata.namespace, name: ref.name }]
            : [];
        },
      },
      {
        type: CapiTypes.Cluster,
        view: clusterForMembers,
        map: async (obj: ApiObject) =>
          (
            await env.cache.listByCluster<KubeadmConfigObject>(
              CapiTypes.KubeadmConfig,
              obj.metadata.namespace,
              obj.metadata.name,
            )
          )
            .filter((c) => !c.status.initialization?.dataSecretCreated)
            .map((c) => ({ namespace: c.metadata.namespace, name: c.metadata.name })),
      },
    ],
    reconcile: (ctx, ref) => reconcileConfig(env, ctx, ref),
  };
}

async function reconcileConfig(
  env: Env,
  ctx: ReconcileContext,
  ref: ObjectRef,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  let cfg = await store.get<KubeadmConfigObject>(CapiTypes.KubeadmConfig, ref.namespace, ref.name);
  if (!cfg) return;
  if (cfg.metadata.deletionTimestamp) {
    await deleteObject(
      store,
      CapiTypes.Secret,
      cfg.metadata.namespace,
      cfg.status.dataSecretName ?? cfg.metadata.name,
    );
    await removeFinalizer(store, cfg, KUBEADM_CONFIG_FINALIZER);
    return;
  }
  const owner = controllerOf(cfg, 'Machine');
  if (!owner) return; // wait until a Machine adopts it
  const machine = await store.get<MachineObject>(CapiTypes.Machine, cfg.metadata.namespace, owner.name);
  if (!machine || machine.metadata.uid !== owner.uid) return;
  const cluster = await getCapiCluster(store, cfg.metadata.namespace, machine.spec.clusterName);
  if (!cluster || isPaused(cluster, cfg)) return;
  cfg = await ensureFinalizer(store, cfg, KUBEADM_CONFIG_FINALIZER);
  const now = env.deps.clock.now();

  if (cfg.status.initialization?.dataSecretCreated)
    return refreshToken(env, store, cfg, machine, cluster, now);

  const role: BootstrapRole =
    cfg.spec.joinConfiguration && !cfg.spec.initConfiguration
      ? CapiLabels.controlPlane in machine.metadata.labels
        ? 'join-control-plane'
        : 'join-worker'
      : cfg.spec.initConfiguration || cfg.spec.clusterConfiguration
        ? 'init'
        : CapiLabels.controlPlane in machine.metadata.labels
          ? 'join-control-plane'
          : 'join-worker';
  const waiting = async (reason: string, message: string) => {
    await writeStatus(store, cfg, {
      ...cfg.status,
      conditions: buildConditions(
        cfg.status.conditions,
        [
          unknownCondition(CapiConditions.Ready, reason, message),
          unknownCondition(CapiConditions.DataSecretAvailable, reason, message),
        ],
        iso(now),
      ),
    });
  };
  const endpoint = cluster.spec.controlPlaneEndpoint;
  if (!endpoint?.host)
    return waiting(CapiReasons.WaitingForInfrastructure, 'waiting for the control plane endpoint');
  const initialized = cluster.status.initialization?.controlPlaneInitialized === true;
  if (role !== 'init' && !initialized)
    return waiting(CapiReasons.WaitingForControlPlane, 'waiting for the control plane to be initialized');

  const version =
    machine.spec.version ??
    cfg.spec.clusterConfiguration?.kubernetesVersion ??
    env.settings.defaultKubernetesVersion;
  const pkiRef = {
    namespace: cluster.metadata.namespace,
    name: cluster.metadata.name,
    displayName: cluster.metadata.annotations[CapiAnnotations.displayName] ?? cluster.metadata.name,
  };
  const material = await env.deps.pki.kubeadmMaterial(pkiRef);
  const pki: PkiFile[] | undefined =
    role === 'join-worker'
      ? undefined
      : [
          { path: 'ca.crt', content: material.ca.certPem },
          { path: 'ca.key', content: material.ca.keyPem },
          { path: 'etcd/ca.crt', content: material.etcd.certPem },
          { path: 'etcd/ca.key', content: material.etcd.keyPem },
          { path: 'front-proxy-ca.crt', content: material.frontProxy.certPem },
          { path: 'front-proxy-ca.key', content: material.frontProxy.keyPem },
          { path: 'sa.pub', content: material.serviceAccount.certPem },
          { path: 'sa.key', content: material.serviceAccount.keyPem },
        ];

  const secretName = cfg.metadata.name;
  const existing = await store.get<SecretObject>(CapiTypes.Secret, cfg.metadata.namespace, secretName);
  let token = existing ? bootstrapTokenOf(secretValue(existing) ?? '') : undefined;
  const ttl = env.settings.bootstrapTokenTtlSeconds;
  if (role !== 'init') {
    const client = await workloadClient(env, cluster);
    if (!client)
      return waiting(CapiReasons.WaitingForControlPlane, 'waiting for the workload cluster API to answer');
    token ??= `${randomToken(6)}.${randomToken(16)}`;
    const [id, secret] = token.split('.') as [string, string];
    await client.createBootstrapToken({ id, secret, ttlSeconds: ttl });
  }
  if (!existing) {
    const net = cluster.spec.clusterNetwork;
    const data = renderCloudInit({
      role,
      kubernetesVersion: version,
      clusterName: cluster.metadata.name,
      controlPlaneEndpoint: { host: endpoint.host, port: endpoint.port },
      ...(net?.pods?.cidrBlocks[0] ? { podSubnet: net.pods.cidrBlocks[0] } : {}),
      ...(net?.services?.cidrBlocks[0] ? { serviceSubnet: net.services.cidrBlocks[0] } : {}),
      ...(net?.serviceDomain ? { dnsDomain: net.serviceDomain } : {}),
      ...(pki ? { pki } : {}),
      caCertPem: material.ca.certPem,
      ...(token ? { token } : {}),
      spec: cfg.spec,
    });
    try {
      await store.create<SecretObject>({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: secretName,
          namespace: cfg.metadata.namespace,
          labels: { [CapiLabels.clusterName]: cluster.metadata.name },
          ownerReferences: [ownerRef(cfg)],
        },
        spec: {
          type: CAPI_SECRET_TYPE,
          data: {
            value: Buffer.from(data, 'utf8').toString('base64'),
            format: Buffer.from('cloud-config').toString('base64'),
          },
        },
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
  const status: KubeadmConfigStatus = {
    ...cfg.status,
    dataSecretName: secretName,
    initialization: { dataSecretCreated: true },
    conditions: buildConditions(
      cfg.status.conditions,
      [trueCondition(CapiConditions.Ready), trueCondition(CapiConditions.DataSecretAvailable)],
      iso(now),
    ),
    observedGeneration: cfg.metadata.generation,
  };
  if (token) {
    status.bootstrapTokenId = token.split('.')[0]!;
    status.bootstrapTokenExpires = iso(now + ttl * 1000);
  }
  await writeStatus(store, cfg, status);
  return token ? { requeueAfterMs: (ttl * 1000 * 2) / 3 } : undefined;
}

/** Keep the join token alive while the machine has not joined; drop the schedule once it has. */
async function refreshToken(
  env: Env,
  store: ObjectStore,
  cfg: KubeadmConfigObject,
  machine: MachineObject,
  cluster: CapiClusterObject,
  now: number,
): Promise<ReconcileResult | void> {
  if (!cfg.status.bootstrapTokenId || machine.status.nodeRef || !cfg.status.bootstrapTokenExpires) return;
  const ttl = env.settings.bootstrapTokenTtlSeconds;
  const expires = Date.parse(cfg.status.bootstrapTokenExpires);
  const refreshAt = expires - (ttl * 1000) / 3;
  if (now < refreshAt) return { requeueAfterMs: refreshAt - now };
  const secret = await store.get<SecretObject>(
    CapiTypes.Secret,
    cfg.metadata.namespace,
    cfg.status.dataSecretName ?? cfg.metadata.name,
  );
  const token = bootstrapTokenOf(secretValue(secret) ?? '');
  const client = await workloadClient(env, cluster);
  if (!token || !client) return { requeueAfterMs: env.settings.cloudPollMs };
  const [id, value] = token.split('.') as [string, string];
  await client.createBootstrapToken({ id, secret: value, ttlSeconds: ttl });
  await writeStatus(store, cfg, { ...cfg.status, bootstrapTokenExpires: iso(now + ttl * 1000) });
  return { requeueAfterMs: (ttl * 1000 * 2) / 3 };
}

const TOKEN_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomToken(n: number): string {
  const bytes = randomBytes(n);
  let s = '';
  for (const b of bytes) s += TOKEN_CHARS[b % TOKEN_CHARS.length];
  return s;
}

/** A KubeadmConfig named like its machine, from a template or the control plane's spec. */
export function newKubeadmConfig(
  namespace: string,
  name: string,
  clusterName: string,
  spec: KubeadmConfigObject['spec'],
  labels: Record<string, string>,
) {
  return {
    apiVersion: BOOTSTRAP_API_VERSION,
    kind: 'KubeadmConfig',
    metadata: {
      name,
      namespace,
      labels: { ...labels, [CapiLabels.clusterName]: clusterName },
      finalizers: [KUBEADM_CONFIG_FINALIZER],
    },
    spec,
  };
}

void falseCondition;
