import type { CapiClusterObject, Clock, Logger, MachineObject } from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import type { ClusterView } from './api/cluster-view.ts';
import { ClusterModel, type EmulationTiming } from './cluster-model.ts';
import type { ClusterListener } from './listener.ts';
import { PersistedObjects } from './persisted-objects.ts';

/** How a booted machine's bootstrap data asks it to become a node. */
export type BootPlan = { kind: 'init' } | { kind: 'join'; token?: string } | { kind: 'none'; reason: string };

/** Everything the emulator keeps for one CAPI cluster. */
export class EmulatedCluster implements ClusterView {
  readonly model: ClusterModel;
  readonly persisted: PersistedObjects;
  readonly watches = new Set<() => void>();
  listener: ClusterListener | undefined;
  /** CA and SAN host the endpoint's certificate was issued for. */
  tlsFor: { caVersion: string; caPem: string; host: string } | undefined;
  /** Bootstrap decision per Machine uid (bootstrap data never changes for a machine). */
  readonly plans = new Map<string, BootPlan>();
  /** Why a machine has not joined yet (logged once per reason). */
  readonly waiting = new Map<string, string>();
  /** Nodes deleted through the API whose machine is going away: their kubelet does not re-register. */
  readonly deletedNodes = new Set<string>();

  constructor(
    readonly namespace: string,
    readonly name: string,
    public capi: CapiClusterObject,
    store: ObjectStore,
    readonly clock: Clock,
    readonly log: Logger,
    timing: EmulationTiming,
    private readonly poke: () => void,
  ) {
    const pods = capi.spec.clusterNetwork?.pods?.cidrBlocks[0];
    this.model = new ClusterModel({ clock, timing, clusterName: name, ...(pods ? { podSubnet: pods } : {}) });
    this.persisted = new PersistedObjects(store, namespace, name);
  }

  get key(): string {
    return `${this.namespace}/${this.name}`;
  }

  serverAddress(): string {
    return `127.0.0.1:${this.listener?.port ?? 0}`;
  }

  caPem(): string {
    return this.tlsFor?.caPem ?? '';
  }

  nodeDeleted(name: string): void {
    this.deletedNodes.add(name);
    this.poke();
  }

  persistedChanged(): void {
    this.poke();
  }

  /** Node name of a machine: its server's name (the OpenStackMachine), as CAPO's kubelet registers it. */
  static nodeNameOf(m: MachineObject): string {
    return m.spec.infrastructureRef?.name ?? m.metadata.name;
  }

  /** Close watches, the endpoint and timers. */
  async close(): Promise<void> {
    for (const close of [...this.watches]) close();
    await this.listener?.close();
    this.listener = undefined;
    this.model.dispose();
  }
}
