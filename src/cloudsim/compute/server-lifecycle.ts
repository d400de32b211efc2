import type { WriteOp } from '../../store/index.ts';
import { dueAt, nowIso, type CloudContext } from '../core/context.ts';
import type { Server } from '../core/records.ts';
import { retryOnConflict, type Row } from '../core/repo.ts';
import type { NetworkService } from '../network/index.ts';
import type { VolumeService } from '../volume/service.ts';

/** Nova's power states. */
export const POWER = { NOSTATE: 0, RUNNING: 1, SHUTDOWN: 4 } as const;

/** Transition actions of a server. */
export type ServerAction = 'build' | 'delete' | 'stop' | 'start' | 'reboot';

/**
 * The asynchronous life of a server: `BUILD` → `ACTIVE` (or `ERROR` with a fault), stop/start/
 * reboot, and deletes that take time. Ports and volumes follow: bound when the server becomes
 * active, released when it fails to build (ports Nova created) or is deleted.
 */
export class ServerLifecycle {
  constructor(
    private readonly ctx: CloudContext,
    private readonly net: NetworkService,
    private readonly vol: VolumeService,
  ) {
    ctx.transitions.register(ctx.repos.servers, (project, id) => this.apply(project, id));
  }

  /** Arm the timer of a server's pending transition. */
  schedule(row: Row<Server>): void {
    const t = row.rec.transition;
    if (t) this.ctx.transitions.schedule('Server', row.project, row.id, t.at);
  }

  /** Start an action now (the record change is the caller's); returns the record with its transition. */
  begin(rec: Server, action: ServerAction, factor = 1, detail?: string): Server {
    return {
      ...rec,
      updated_at: nowIso(this.ctx),
      transition: { action, at: dueAt(this.ctx, factor), ...(detail !== undefined ? { detail } : {}) },
    };
  }

  /** Apply a due transition (idempotent). */
  async apply(project: string, id: string): Promise<void> {
    await retryOnConflict(async () => {
      const row = await this.ctx.repos.servers.get(project, id);
      const t = row?.rec.transition;
      if (!row || !t || t.at > this.ctx.clock.now()) return;
      const action = t.action as ServerAction;
      switch (action) {
        case 'build':
          await this.ctx.store.commit(
            t.detail !== undefined ? await this.failOps(row, t.detail) : await this.activateOps(row),
          );
          return;
        case 'delete':
          await this.ctx.store.commit(await this.deleteOps(row));
          return;
        case 'stop':
          await this.ctx.repos.servers.update(
            row,
            this.settled(row.rec, 'SHUTOFF', 'stopped', POWER.SHUTDOWN),
          );
          return;
        case 'start':
        case 'reboot':
          await this.ctx.repos.servers.update(row, this.settled(row.rec, 'ACTIVE', 'active', POWER.RUNNING));
          return;
        default:
          await this.ctx.repos.servers.update(row, { ...row.rec, transition: null });
      }
    });
  }

  private settled(rec: Server, status: string, vmState: string, power: number): Server {
    return {
      ...rec,
      status,
      vm_state: vmState,
      power_state: power,
      task_state: null,
      transition: null,
      updated_at: nowIso(this.ctx),
    };
  }

  private async activateOps(row: Row<Server>): Promise<WriteOp[]> {
    const now = nowIso(this.ctx);
    const ops: WriteOp[] = [];
    for (const ref of row.rec.ports) {
      const port = await this.ctx.repos.ports.find(ref.port_id);
      if (!port) continue;
      const rec = {
        ...port.rec,
        binding_host_id: row.rec.host,
        status: 'ACTIVE',
        updated_at: now,
        revision_number: port.rec.revision_number + 1,
      };
      ops.push(this.ctx.repos.ports.updateOp(port, rec));
    }
    for (const ref of row.rec.volumes) {
      const v = await this.ctx.repos.volumes.find(ref.volume_id);
      if (v)
        ops.push(
          this.ctx.repos.volumes.updateOp(v, {
            ...this.vol.attached(v.rec, row.id, ref.device),
            transition: null,
          }),
        );
    }
    ops.push(
      this.ctx.repos.servers.updateOp(row, {
        ...this.settled(row.rec, 'ACTIVE', 'active', POWER.RUNNING),
        launched_at: now,
        progress: 0,
      }),
    );
    return ops;
  }

  /** A failed build: the server ends in ERROR with a fault; networking Nova allocated is cleaned up, as Nova does. */
  private async failOps(row: Row<Server>, message: string): Promise<WriteOp[]> {
    const now = nowIso(this.ctx);
    const text = message === '' ? 'No valid host was found. ' : message;
    const ops = await this.releasePortOps(row.rec);
    ops.push(
      this.ctx.repos.servers.updateOp(row, {
        ...this.settled(row.rec, 'ERROR', 'error', POWER.NOSTATE),
        ports: row.rec.ports.filter((p) => !p.created_by_nova),
        fault: {
          code: 500,
          message: text,
          details: `Traceback (most recent call last):\n  File "nova/conductor/manager.py", in schedule_and_build_instances\nnova.exception.NoValidHost: ${text}\n`,
          created: now,
        },
      }),
    );
    return ops;
  }

  /** Writes that delete the ports Nova created for a server and unbind the ones the user gave. */
  private async releasePortOps(s: Server): Promise<WriteOp[]> {
    const ops: WriteOp[] = [];
    const now = nowIso(this.ctx);
    for (const ref of s.ports) {
      const port = await this.ctx.repos.ports.find(ref.port_id);
      if (!port) continue;
      if (ref.created_by_nova) ops.push(...(await this.net.deletePortOps(port)));
      else {
        const rec = {
          ...port.rec,
          device_id: '',
          device_owner: '',
          binding_host_id: '',
          status: 'DOWN',
          updated_at: now,
          revision_number: port.rec.revision_number + 1,
        };
        ops.push(this.ctx.repos.ports.updateOp(port, rec));
      }
    }
    return ops;
  }

  /** Writes that remove a server: ports released, volumes detached (or deleted with the server). */
  async deleteOps(row: Row<Server>): Promise<WriteOp[]> {
    const ops = await this.releasePortOps(row.rec);
    for (const ref of row.rec.volumes) {
      const v = await this.ctx.repos.volumes.find(ref.volume_id);
      if (!v) continue;
      if (ref.delete_on_termination) ops.push(this.ctx.repos.volumes.deleteOp(v));
      else ops.push(this.ctx.repos.volumes.updateOp(v, this.vol.detached(v.rec, row.id)));
    }
    ops.push(this.ctx.repos.servers.deleteOp(row));
    return ops;
  }
}
