import { ConflictError, InputError, NotAllowedError, NotFoundError } from '../../domain/index.ts';
import type { WriteOp } from '../../store/index.ts';
import { dueAt, nowIso, type CloudContext } from '../core/context.ts';
import type { Caller } from '../core/http.ts';
import type { HealthMonitor, Listener, LoadBalancer, Member, Pool } from '../core/records.ts';
import { retryOnConflict, type Row } from '../core/repo.ts';
import type { NetworkService } from '../network/index.ts';

/** Octavia's errors. */
export const octaviaErrors = {
  notFound: (resource: string, id: string) => new NotFoundError(`${resource} ${id} not found.`),
  immutable: (resource: string, id: string) =>
    new ConflictError(`${resource} ${id} is immutable and cannot be updated.`, { code: 'ImmutableObject' }),
  pendingState: (state: string, id: string) =>
    new ConflictError(`Invalid state ${state} of loadbalancer resource ${id}`, {
      code: 'LBPendingStateError',
    }),
  validation: (detail: string) =>
    new InputError(`Validation failure: ${detail}`, { code: 'ValidationException' }),
  quota: (resource: string) =>
    new NotAllowedError(`Quota has been met for resources: ${resource}`, { code: 'QuotaException' }),
  subresource: (resource: string, id: string) =>
    new InputError(`${resource} ${id} not found.`, { code: 'InvalidSubresource' }),
  invalidOption: (value: string, option: string) =>
    new InputError(`${value} is not a valid option for ${option}`, { code: 'InvalidOption' }),
};
const E = octaviaErrors;

/** The children of a load balancer. */
export interface LbTree {
  lb: Row<LoadBalancer>;
  listeners: Row<Listener>[];
  pools: Row<Pool>[];
  members: Row<Member>[];
  monitors: Row<HealthMonitor>[];
}

/**
 * Octavia's provisioning engine: a load balancer and everything under it change together. A
 * change puts the load balancer in `PENDING_UPDATE` (the child in `PENDING_*`) and the load
 * balancer holds the transition; when it completes, every pending child settles at once.
 * While pending, the whole tree is immutable (409).
 */
export class LbEngine {
  constructor(
    private readonly ctx: CloudContext,
    private readonly net: NetworkService,
  ) {
    ctx.transitions.register(ctx.repos.loadBalancers, (project, id) => this.apply(project, id));
  }

  async tree(lb: Row<LoadBalancer>): Promise<LbTree> {
    const sel = { project: lb.project, labels: { loadbalancer_id: lb.id } };
    const r = this.ctx.repos;
    return {
      lb,
      listeners: await r.listeners.list(sel),
      pools: await r.pools.list(sel),
      members: await r.members.list(sel),
      monitors: await r.healthMonitors.list(sel),
    };
  }

  /** A load balancer as the caller may see it, its due transition applied. */
  async getLb(caller: Caller, id: string): Promise<Row<LoadBalancer>> {
    let row = await this.ctx.repos.loadBalancers.find(id);
    if (row && !caller.isAdmin && row.project !== caller.project) row = undefined;
    if (row) row = await this.ctx.transitions.settle(this.ctx.repos.loadBalancers, row);
    if (!row) throw E.notFound('Load Balancer', id);
    return row;
  }

  /** Refuse changes while the load balancer is pending (Octavia's test-and-set). */
  requireMutable(lb: Row<LoadBalancer>, child?: { resource: string; id: string; status: string }): void {
    if (child && child.status.startsWith('PENDING_')) throw E.immutable(child.resource, child.id);
    if (lb.rec.provisioning_status !== 'ACTIVE' && lb.rec.provisioning_status !== 'ERROR')
      throw E.immutable('Load Balancer', lb.id);
  }

  /** The write that puts the load balancer in PENDING_UPDATE with a transition. */
  lockOp(lb: Row<LoadBalancer>, status = 'PENDING_UPDATE', action = 'update'): { op: WriteOp; at: number } {
    const at = dueAt(this.ctx);
    return {
      op: this.ctx.repos.loadBalancers.updateOp(lb, {
        ...lb.rec,
        provisioning_status: status,
        updated_at: nowIso(this.ctx),
        transition: { action, at },
      }),
      at,
    };
  }

  /** Commit writes that include {@link lockOp} and arm the timer. */
  async commitLocked(lb: Row<LoadBalancer>, ops: WriteOp[], at: number): Promise<void> {
    await this.ctx.store.commit(ops);
    this.ctx.transitions.schedule('LoadBalancer', lb.project, lb.id, at);
  }

  async checkQuota(
    project: string,
    resource: 'load_balancer' | 'listener' | 'pool' | 'member' | 'health_monitor',
    label: string,
    count: () => Promise<number>,
  ): Promise<void> {
    const limit = await this.ctx.quotas.limit(project, 'loadbalancer', resource);
    if (limit >= 0 && (await count()) >= limit) throw E.quota(label);
  }

  /** Apply a due transition: settle or remove the pending tree. */
  async apply(project: string, id: string): Promise<void> {
    await retryOnConflict(async () => {
      const r = this.ctx.repos;
      const lb = await r.loadBalancers.get(project, id);
      const t = lb?.rec.transition;
      if (!lb || !t || t.at > this.ctx.clock.now()) return;
      const tree = await this.tree(lb);
      const now = nowIso(this.ctx);
      const ops: WriteOp[] = [];
      if (t.action === 'delete') {
        ops.push(
          ...tree.monitors.map((x) => r.healthMonitors.deleteOp(x)),
          ...tree.members.map((x) => r.members.deleteOp(x)),
        );
        ops.push(
          ...tree.pools.map((x) => r.pools.deleteOp(x)),
          ...tree.listeners.map((x) => r.listeners.deleteOp(x)),
        );
        const port = await r.ports.find(lb.rec.vip_port_id);
        if (port) ops.push(...(await this.net.deletePortOps(port)));
        ops.push(r.loadBalancers.deleteOp(lb));
        await this.ctx.store.commit(ops);
        return;
      }
      const failed = t.detail !== undefined;
      const settle = <
        T extends { provisioning_status: string; operating_status: string; updated_at: string | null },
      >(
        rec: T,
        online: string,
      ): T | 'delete' | undefined => {
        if (rec.provisioning_status === 'PENDING_DELETE') return 'delete';
        if (!rec.provisioning_status.startsWith('PENDING_')) return undefined;
        return {
          ...rec,
          provisioning_status: failed ? 'ERROR' : 'ACTIVE',
          operating_status: failed ? 'ERROR' : online,
          updated_at: rec.provisioning_status === 'PENDING_CREATE' ? rec.updated_at : now,
        };
      };
      const hmPools = new Set(
        tree.monitors.filter((m) => m.rec.provisioning_status !== 'PENDING_DELETE').map((m) => m.rec.pool_id),
      );
      const each = <
        R extends { provisioning_status: string; operating_status: string; updated_at: string | null },
      >(
        rows: Row<R>[],
        repo: { updateOp(row: Row<R>, rec: R): WriteOp; deleteOp(row: Row<R>): WriteOp },
        online: (row: Row<R>) => string,
      ) => {
        for (const row of rows) {
          const next = settle(row.rec, online(row));
          if (next === 'delete') ops.push(repo.deleteOp(row));
          else if (next) ops.push(repo.updateOp(row, next));
        }
      };
      each(tree.listeners, r.listeners, () => 'ONLINE');
      each(tree.pools, r.pools, () => 'ONLINE');
      each(tree.members, r.members, (m) => (hmPools.has(m.rec.pool_id) ? 'ONLINE' : 'NO_MONITOR'));
      each(tree.monitors, r.healthMonitors, () => 'ONLINE');
      ops.push(
        r.loadBalancers.updateOp(lb, {
          ...lb.rec,
          provisioning_status: failed ? 'ERROR' : 'ACTIVE',
          operating_status: failed ? 'ERROR' : 'ONLINE',
          updated_at: t.action === 'create' ? lb.rec.updated_at : now,
          transition: null,
        }),
      );
      await this.ctx.store.commit(ops);
    });
  }
}
