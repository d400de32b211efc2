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
    await this.store.create<MServiceObject>({
      apiVersion: MAGNUM_API_VERSION,
      kind: 'MService',
      metadata: { name: this.name, namespace: '' },
      spec,
      status,
    });
  }
}
