import {
  ConflictError,
  MAGNUM_API_VERSION,
  MagnumTypes,
  type Clock,
  type Logger,
  type MServiceObject,
  type MServiceSpec,
  type MServiceStatus,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';

/** The Magnum binary name controller processes report as. */
export const CONDUCTOR_BINARY = 'magnetar-conductor';

/**
 * The `MService` heartbeat of a controller process, which `openstack coe service list` shows
 * (the API derives up/down from `lastSeen`). One object per host, named
 * `<host>.magnetar-conductor`, with a small integer id that stays the same across restarts.
 */
export class ServiceHeartbeat {
  constructor(
    private readonly store: ObjectStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    readonly host: string,
  ) {}

  get name(): string {
    return `${this.host}.${CONDUCTOR_BINARY}`;
  }

  /** Write one heartbeat: create the object on first beat, else bump `reportCount`/`lastSeen`. */
  async beat(): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.beatOnce();
        return;
      } catch (err) {
        // Another process on this host beat at the same moment: read again and retry.
        if (err instanceof ConflictError) continue;
        this.log.warn({ err }, 'service heartbeat failed');
        return;
      }
    }
  }

  private async beatOnce(): Promise<void> {
    const lastSeen = new Date(this.clock.now()).toISOString();
    const current = await this.store.get<MServiceObject>(MagnumTypes.MService, '', this.name);
    if (current) {
      await this.store.updateStatus<MServiceObject>({
        ...current,
        status: { reportCount: (current.status.reportCount ?? 0) + 1, lastSeen },
      });
      return;
    }
    const all = await this.store.list<MServiceObject>(MagnumTypes.MService);
    const id = all.items.reduce((max, s) => Math.max(max, Number(s.spec.id) || 0), 0) + 1;
    const spec: MServiceSpec = {
      id,
      host: this.host,
      binary: CONDUCTOR_BINARY,
      disabled: false,
      disabledReason: null,
    };
    const status: MServiceStatus = { reportCount: 1, lastSeen };
    const created = await this.store.create<MServiceObject>({
      apiVersion: MAGNUM_API_VERSION,
      kind: 'MService',
      metadata: { name: this.name, namespace: '' },
      spec,
      status,
    });
    await this.resolveIdClash(created);
  }

  /**
   * Two hosts starting at the same moment may both pick max + 1. The one created later (higher
   * resourceVersion) moves to a fresh id, so ids stay unique without a lock.
   */
  private async resolveIdClash(mine: MServiceObject): Promise<void> {
    const all = (await this.store.list<MServiceObject>(MagnumTypes.MService)).items;
    const clash = all.some(
      (s) =>
        s.metadata.name !== mine.metadata.name &&
        s.spec.id === mine.spec.id &&
        Number(s.metadata.resourceVersion) < Number(mine.metadata.resourceVersion),
    );
    if (!clash) return;
    const id = all.reduce((max, s) => Math.max(max, Number(s.spec.id) || 0), 0) + 1;
    const current = all.find((s) => s.metadata.name === mine.metadata.name) ?? mine;
    await this.store.update<MServiceObject>({ ...current, spec: { ...current.spec, id } });
  }
}
