import type { Clock, Logger } from '../../../domain/index.ts';
import type { ClusterModel } from '../cluster-model.ts';
import type { PersistedObjects } from '../persisted-objects.ts';

/** What the emulated API server of one cluster works on. */
export interface ClusterView {
  /** CAPI cluster name. */
  readonly name: string;
  readonly model: ClusterModel;
  readonly persisted: PersistedObjects;
  readonly clock: Clock;
  readonly log: Logger;
  /** `127.0.0.1:<port>` the API is served on. */
  serverAddress(): string;
  /** The cluster CA PEM (for `kube-root-ca.crt`). */
  caPem(): string;
  /** The node was deleted through the API (the emulator decides whether its kubelet re-registers). */
  nodeDeleted(name: string): void;
  /** Persisted objects changed (a bootstrap token may let a waiting machine join). */
  persistedChanged(): void;
  /** Closers of open watches, called when the server stops. */
  readonly watches: Set<() => void>;
}
