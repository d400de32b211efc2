import { createEnv, type Env } from './common/env.ts';
import type { Reconciler } from './common/runtime-types.ts';
import { clusterReconciler } from './cluster/cluster-controller.ts';
import type { ControllerDeps } from './deps.ts';
import type { ObjectStore } from '../store/index.ts';
import { backupReconciler, backupScheduleReconciler } from './backup/index.ts';
import { kubeadmConfigReconciler } from './kubeadm-config/kubeadm-config-controller.ts';
import { kcpReconciler } from './kubeadm-control-plane/kcp-controller.ts';
import { machineDeploymentReconciler } from './machine-deployment/md-controller.ts';
import { machineHealthCheckReconciler } from './machine-health-check/mhc-controller.ts';
import { machineSetReconciler } from './machine-set/ms-controller.ts';
import { machineReconciler } from './machine/machine-controller.ts';
import { magnumClusterReconciler } from './magnum-driver/magnum-controller.ts';
import { openStackClusterReconciler } from './openstack-cluster/osc-controller.ts';
import { openStackMachineReconciler } from './openstack-machine/osm-controller.ts';

/** The provisioning engine's reconcilers and their shared environment. */
export interface Controllers {
  reconcilers: Reconciler[];
  /** Shared caches (for benchmarks and diagnostics). */
  env: Env;
}

/**
 * Every reconciler of the provisioning engine — Cluster API core (Cluster, KubeadmControlPlane,
 * MachineDeployment, MachineSet, Machine, MachineHealthCheck, KubeadmConfig), the OpenStack
 * infrastructure (OpenStackCluster, OpenStackMachine) and the Magnum driver — sharing one
 * object cache over `deps.store`. Register them with a `ControllerManager` on the same store.
 */
export function createControllers(deps: ControllerDeps): Reconciler[] {
  return createEngine(deps).reconcilers;
}

/** {@link createControllers} with the shared environment (benchmarks, diagnostics). */
export function createEngine(deps: ControllerDeps): Controllers {
  const env = createEnv(deps.store, deps);
  return {
    env,
    reconcilers: readThroughCache(env, deps.store, [
      magnumClusterReconciler(env),
      clusterReconciler(env),
      openStackClusterReconciler(env),
      kcpReconciler(env),
      machineDeploymentReconciler(env),
      machineSetReconciler(env),
      machineReconciler(env),
      kubeadmConfigReconciler(env),
      openStackMachineReconciler(env),
      machineHealthCheckReconciler(env),
      ...(deps.backup
        ? [backupReconciler(env, deps.backup), backupScheduleReconciler(env, deps.backup)]
        : []),
    ]),
  };
}

/**
 * The reconcilers as registered: one given the manager's store reads through the object cache
 * instead (the same answers, see {@link CachedReads}), and so does the manager's read of its
 * object before each reconcile. A manager on another store is left alone.
 */
function readThroughCache(env: Env, store: ObjectStore, reconcilers: Reconciler[]): Reconciler[] {
  const reads = (s: ObjectStore) => (s === store ? env.store : s);
  return reconcilers.map((r) => ({
    ...r,
    reconcile: (ctx, ref) => r.reconcile({ ...ctx, store: reads(ctx.store) }, ref),
    read: (s, ref) => reads(s).get(r.type, ref.namespace, ref.name),
  }));
}
