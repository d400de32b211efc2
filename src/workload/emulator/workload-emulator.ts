import {
  CapiLabels,
  CapiTypes,
  ConflictError,
  typeOf,
  type CapiClusterObject,
  type Clock,
  type Logger,
  type MachineObject,
} from '../../domain/index.ts';
import type { ObjectStore, WatchEvent } from '../../store/index.ts';
import type { StorePki } from '../pki/store-pki.ts';
import { bootPlanOf, tokenProblem } from './bootstrap-plan.ts';
import { DEFAULT_TIMING, type EmulationTiming } from './cluster-model.ts';
import { EmulatedCluster } from './emulated-cluster.ts';
import { Endpoints } from './endpoints.ts';
import { SharedHttpEngine } from './listener.ts';
import { WORKLOAD_CLUSTER_LABEL, WorkloadTypes } from './persisted-objects.ts';
import type { NodeInput } from './system-objects.ts';

/**
 * EMULATION of workload clusters for the embedded cloud. The embedded cloud's servers are
 * records, not VMs: nothing boots, nothing runs kubeadm. Like Cluster API's in-memory
 * provider, this component shows, in the open, what kubeadm and the kubelets would have
 * produced: when a control-plane Machine's server is provisioned, the cluster's Kubernetes API
 * is served over HTTPS on a loopback port (certificate from the cluster CA, client
 * certificates required) and announced in the CAPI Cluster's `workload.magnetar.io/endpoint`
 * annotation; each provisioned Machine whose bootstrap data would let it join becomes a Node
 * (NotReady, then Ready), with the system pods kubeadm deploys. Nodes report the OS image
 * "Magnetar emulated node"; no workload can run. See docs/workload-emulation.md.
 *
 * It follows the store's revision feed (Clusters, Machines, Secrets and its own persisted
 * workload objects), keeps its own index of them, and reconciles a cluster whenever one of
 * its objects changes.
 */

/** Options of {@link WorkloadEmulator}. */
export interface WorkloadEmulatorOptions {
  store: ObjectStore;
  pki: StorePki;
  clock: Clock;
  /** Address the emulated API servers listen on. @default 127.0.0.1 */
  host?: string;
  log: Logger;
  /** How long nodes and pods take to become ready. @default DEFAULT_TIMING */
  timing?: Partial<EmulationTiming>;
  /** Clusters reconciled concurrently. @default 8 */
  concurrency?: number;
  /**
   * Run only while holding this store lease, so that of several processes sharing a store
   * exactly one serves the emulated endpoints (and a survivor takes over). @default none: always run
   */
  lease?: { holder: string; ttlMs: number; /** @default workload-emulator */ name?: string };
}

const WATCHED = [
  CapiTypes.Cluster,
  CapiTypes.Machine,
  CapiTypes.Secret,
  WorkloadTypes.Namespace,
  WorkloadTypes.Secret,
  WorkloadTypes.ConfigMap,
];
const RETRY_MS = 2_000;

function clusterKeyOfMachine(m: MachineObject): string {
  return `${m.metadata.namespace}/${m.spec.clusterName}`;
}

/** True when the machine's server exists and its infrastructure reports provisioned. */
export function infrastructureProvisioned(m: MachineObject): boolean {
  if (!m.spec.providerID) return false;
  const legacy = (m.status as { infrastructureReady?: boolean }).infrastructureReady;
  return m.status.initialization?.infrastructureProvisioned === true || legacy === true;
}

/** The emulation of every workload cluster whose machines run on the embedded cloud. */
export class WorkloadEmulator {
  private readonly store: ObjectStore;
  private readonly pki: StorePki;
  private readonly clock: Clock;
  private readonly host: string;
  private readonly log: Logger;
  private readonly timing: EmulationTiming;
  private readonly concurrency: number;
  private engine: SharedHttpEngine | undefined;
  private readonly clusters = new Map<string, CapiClusterObject>();
  private readonly machines = new Map<string, Map<string, MachineObject>>();
  private readonly emulated = new Map<string, EmulatedCluster>();
  private readonly dirty = new Set<string>();
  private revision = 0;
  private feedPending = false;
  private running: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly retryTimers = new Map<string, () => void>();
  /** True while serving (started, and holding the lease when there is one). */
  private active = false;
  private started = false;
  private readonly lease: { holder: string; ttlMs: number; name: string } | undefined;
  private cancelLeaseTimer: (() => void) | undefined;
  private readonly endpoints: Endpoints;

  constructor(options: WorkloadEmulatorOptions) {
    this.store = options.store;
    this.pki = options.pki;
    this.clock = options.clock;
    this.host = options.host ?? '127.0.0.1';
    this.log = options.log.child({ component: 'workload-emulator' });
    this.timing = { ...DEFAULT_TIMING, ...(options.timing ?? {}) };
    this.concurrency = options.concurrency ?? 8;
    this.lease = options.lease ? { name: 'workload-emulator', ...options.lease } : undefined;
    this.endpoints = new Endpoints(this.store, this.pki, this.host, this.log, () => this.engine);
  }

  private get stopped(): boolean {
    return !this.active;
  }

  /**
   * Start: index the current Clusters and Machines, bring their emulated clusters up (in the
   * background; `idle()` waits for them), then follow the feed. With a lease, only while it is held.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    if (this.lease) await this.leaseTick();
    else await this.activate();
  }

  /** Stop following the store and close every emulated endpoint (state stays in the store). */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.cancelLeaseTimer?.();
    this.cancelLeaseTimer = undefined;
    await this.deactivate();
    if (this.lease) await this.store.releaseLease(this.lease.name, this.lease.holder).catch(() => undefined);
  }

  private async leaseTick(): Promise<void> {
    const lease = this.lease!;
    let held = false;
    try {
      held = await this.store.acquireLease(lease.name, lease.holder, lease.ttlMs, this.clock.now());
    } catch (err) {
      this.log.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'workload emulator: lease renewal failed',
      );
    }
    if (!this.started) return;
    if (held && !this.active) {
      this.log.info(
        { holder: lease.holder },
        'workload emulator: lease acquired, serving the emulated clusters',
      );
      await this.activate();
    } else if (!held && this.active) {
      this.log.warn(
        { holder: lease.holder },
        'workload emulator: lease lost, closing the emulated endpoints',
      );
      await this.deactivate();
    }
    if (this.started)
      this.cancelLeaseTimer = this.clock.setTimer(
        () => void this.leaseTick(),
        Math.max(1, Math.floor(lease.ttlMs / 3)),
      );
  }

  private async activate(): Promise<void> {
    if (this.active) return;
    this.active = true;
    this.engine = new SharedHttpEngine();
    await this.relist();
    this.unsubscribe = this.store.onChange(() => this.kick(true));
    this.kick(true);
  }

  private async deactivate(): Promise<void> {
    if (!this.active) return;
    this.active = false;
    this.unsubscribe?.();
    for (const cancel of this.retryTimers.values()) cancel();
    this.retryTimers.clear();
    await this.running?.catch(() => undefined);
    for (const emu of this.emulated.values()) await emu.close();
    this.emulated.clear();
    this.engine?.server.closeAllConnections();
    this.engine = undefined;
  }

  /** Resolves when the feed seen so far has been processed (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
  }

  /** The endpoint URL of an emulated cluster, if it is serving. */
  endpointOf(namespace: string, name: string): string | undefined {
    const emu = this.emulated.get(`${namespace}/${name}`);
    return emu?.listener ? `https://${emu.serverAddress()}` : undefined;
  }

  /** Number of emulated clusters with a running API (metrics, tests). */
  get servingCount(): number {
    return [...this.emulated.values()].filter((e) => e.listener).length;
  }

  // ---------------------------------------------------------------- feed

  private kick(feed: boolean): void {
    if (this.stopped) return;
    if (feed) this.feedPending = true;
    if (!this.running) {
      this.running = this.pump().finally(() => {
        this.running = undefined;
        if ((this.feedPending || this.dirty.size > 0) && !this.stopped) this.kick(false);
      });
    }
  }

  private async pump(): Promise<void> {
    while (!this.stopped && (this.feedPending || this.dirty.size > 0)) {
      if (this.feedPending) {
        this.feedPending = false;
        try {
          await this.readFeed();
        } catch (err) {
          if (err instanceof ConflictError && err.code === 'Expired') await this.relist();
          else {
            this.log.warn({ err: String(err) }, 'reading the store feed failed; retrying');
            this.retryLater('(feed)');
            return;
          }
        }
      }
      const keys = [...this.dirty];
      this.dirty.clear();
      await this.pool(keys, (key) => this.reconcileSafely(key));
    }
  }

  private async pool(keys: string[], fn: (key: string) => Promise<void>): Promise<void> {
    let i = 0;
    const worker = async () => {
      while (i < keys.length && !this.stopped) await fn(keys[i++]!);
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, keys.length) }, worker));
  }

  private retryLater(key: string): void {
    if (this.stopped || this.retryTimers.has(key)) return;
    this.retryTimers.set(
      key,
      this.clock.setTimer(() => {
        this.retryTimers.delete(key);
        if (key === '(feed)') this.kick(true);
        else {
          this.dirty.add(key);
          this.kick(false);
        }
      }, RETRY_MS),
    );
  }

  private async relist(): Promise<void> {
    const revision = await this.store.currentRevision();
    this.clusters.clear();
    this.machines.clear();
    for (const c of (await this.store.list<CapiClusterObject>(CapiTypes.Cluster)).items) {
      this.clusters.set(`${c.metadata.namespace}/${c.metadata.name}`, c);
    }
    for (const m of (await this.store.list<MachineObject>(CapiTypes.Machine)).items) this.indexMachine(m);
    for (const key of [...this.clusters.keys(), ...this.machines.keys(), ...this.emulated.keys()])
      this.dirty.add(key);
    this.revision = revision;
  }

  private indexMachine(m: MachineObject): void {
    const key = clusterKeyOfMachine(m);
    let byName = this.machines.get(key);
    if (!byName) this.machines.set(key, (byName = new Map<string, MachineObject>()));
    byName.set(m.metadata.name, m);
  }

  private async readFeed(): Promise<void> {
    const current = await this.store.currentRevision();
    for (;;) {
      const events = await this.store.changes(this.revision, { types: WATCHED, limit: 1000 });
      for (const e of events) {
        this.revision = e.revision;
        this.apply(e);
      }
      if (events.length < 1000) break;
    }
    this.revision = Math.max(this.revision, current);
  }

  private apply(e: WatchEvent): void {
    const o = e.object;
    const ns = o.metadata.namespace;
    switch (typeOf(o)) {
      case CapiTypes.Cluster: {
        const key = `${ns}/${o.metadata.name}`;
        if (e.type === 'DELETED') this.clusters.delete(key);
        else this.clusters.set(key, o);
        this.dirty.add(key);
        return;
      }
      case CapiTypes.Machine: {
        const m = o as MachineObject;
        const key = clusterKeyOfMachine(m);
        if (e.type === 'DELETED') {
          this.machines.get(key)?.delete(m.metadata.name);
          if (this.machines.get(key)?.size === 0) this.machines.delete(key);
        } else this.indexMachine(m);
        this.dirty.add(key);
        return;
      }
      case CapiTypes.Secret: {
        const cluster = o.metadata.labels[CapiLabels.clusterName];
        if (cluster) this.dirty.add(`${ns}/${cluster}`);
        return;
      }
      default: {
        const cluster = o.metadata.labels[WORKLOAD_CLUSTER_LABEL];
        if (cluster) this.dirty.add(`${ns}/${cluster}`);
      }
    }
  }

  // ---------------------------------------------------------------- reconcile

  private async reconcileSafely(key: string): Promise<void> {
    try {
      await this.reconcile(key);
    } catch (err) {
      this.log.warn(
        { cluster: key, err: err instanceof Error ? err.message : String(err) },
        'emulated cluster: reconcile failed; retrying',
      );
      this.retryLater(key);
    }
  }

  private async reconcile(key: string): Promise<void> {
    const capi = this.clusters.get(key);
    const machines = [...(this.machines.get(key)?.values() ?? [])];
    let emu = this.emulated.get(key);
    if (!capi) {
      if (emu) {
        this.emulated.delete(key);
        await emu.close();
        await emu.persisted.deleteAll();
        this.log.info({ cluster: key }, 'emulated workload cluster removed with its CAPI cluster');
      }
      return;
    }
    if (!emu) {
      if (!machines.some(infrastructureProvisioned)) return;
      emu = new EmulatedCluster(
        capi.metadata.namespace,
        capi.metadata.name,
        capi,
        this.store,
        this.clock,
        this.log,
        this.timing,
        () => {
          this.dirty.add(key);
          this.kick(false);
        },
      );
      this.emulated.set(key, emu);
    }
    emu.capi = capi;
    if (emu.listener) await this.endpoints.refresh(emu);

    // Machines whose node already joined first (restart), then control plane, then the rest, oldest first.
    const rank = (m: MachineObject) =>
      (m.status.nodeRef ? 0 : 2) + (CapiLabels.controlPlane in m.metadata.labels ? 0 : 1);
    machines.sort(
      (a, b) => rank(a) - rank(b) || a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp),
    );
    const liveNames = new Set<string>();
    for (const m of machines) {
      liveNames.add(m.metadata.name);
      await this.reconcileMachine(emu, m);
    }
    for (const { node, machine } of emu.model.nodeMachines()) {
      if (!machine || !liveNames.has(machine)) {
        emu.model.removeNode(node);
        this.log.debug({ cluster: key, node }, 'emulated node removed with its machine');
      }
    }
    for (const n of [...emu.deletedNodes]) {
      if (!machines.some((m) => EmulatedCluster.nodeNameOf(m) === n)) emu.deletedNodes.delete(n);
    }
    if (emu.listener && emu.model.controlPlaneNodes().length === 0) {
      this.log.info({ cluster: key }, 'emulated workload API stopped: no control-plane node is left');
      await emu.listener.close();
      emu.listener = undefined;
    }
  }

  private nodeInput(m: MachineObject): NodeInput {
    const zone = m.spec.failureDomain ?? m.status.failureDomain;
    return {
      name: EmulatedCluster.nodeNameOf(m),
      machineName: m.metadata.name,
      providerID: m.spec.providerID ?? '',
      controlPlane: CapiLabels.controlPlane in m.metadata.labels,
      version: m.spec.version ?? 'v0.0.0',
      ...(zone ? { zone } : {}),
      addresses: (m.status.addresses ?? []).map((a) => ({ type: a.type, address: a.address })),
    };
  }

  private wait(emu: EmulatedCluster, m: MachineObject, reason: string): void {
    if (emu.waiting.get(m.metadata.name) === reason) return;
    emu.waiting.set(m.metadata.name, reason);
    this.log.info(
      { cluster: emu.key, machine: m.metadata.name, reason },
      'emulated machine has not joined its cluster',
    );
  }

  private async reconcileMachine(emu: EmulatedCluster, m: MachineObject): Promise<void> {
    const input = this.nodeInput(m);
    if (emu.model.hasNode(input.name)) {
      emu.model.refreshNode(input);
      return;
    }
    if (!infrastructureProvisioned(m)) return;
    // A machine being deleted never (re)joins: its node is drained and deleted, its server goes.
    if (m.metadata.deletionTimestamp) return;
    // A node deleted through the API while its machine lives: the kubelet registers it again.
    emu.deletedNodes.delete(input.name);
    if (m.status.nodeRef?.name === input.name) {
      // Joined before a restart: the kubelet was running all along.
      if (input.controlPlane) await this.endpoints.ensure(emu);
      emu.model.addNode(input, true);
      emu.waiting.delete(m.metadata.name);
      return;
    }
    let plan = emu.plans.get(m.metadata.uid);
    if (!plan) {
      plan = await bootPlanOf(this.store, m, emu.listener !== undefined);
      if (!plan) return this.wait(emu, m, 'waiting for the bootstrap data secret');
      if (plan.kind !== 'none') emu.plans.set(m.metadata.uid, plan);
    }
    switch (plan.kind) {
      case 'none':
        return this.wait(emu, m, plan.reason);
      case 'init':
        await this.endpoints.ensure(emu);
        break;
      case 'join': {
        if (!emu.listener)
          return this.wait(emu, m, 'the cluster API is not up yet (no control-plane node ran kubeadm init)');
        const problem = await tokenProblem(emu.persisted, plan.token, this.clock.now());
        if (problem) return this.wait(emu, m, `kubeadm join refused: ${problem}`);
        break;
      }
    }
    emu.model.addNode(input, false);
    emu.waiting.delete(m.metadata.name);
    this.log.debug(
      { cluster: emu.key, node: input.name, version: input.version },
      `emulated node registered (kubeadm ${plan.kind})`,
    );
  }
}
