import type { Clock, Logger } from '../../domain/index.ts';
import type { Transition } from './records.ts';
import type { Repo, Row } from './repo.ts';

/** A kind whose records may carry a pending {@link Transition}. */
interface Transitional {
  transition: Transition | null;
}

/**
 * Applies a due transition to one row and returns the row afterwards (undefined once removed).
 * Must be idempotent: it re-reads and does nothing when the transition is gone or not yet due.
 */
export type TransitionHandler = (project: string, id: string) => Promise<void>;

/**
 * The asynchronous side of the embedded cloud: servers building, load balancers provisioning,
 * volumes being created, deletes taking time. A pending change is stored in the record itself
 * (`transition: {action, at}`), so it survives a restart: {@link resume} re-arms a timer for every
 * stored one. Reads apply due transitions too ({@link settle}), so what a client sees never lags
 * the clock, whatever order timers fire in.
 */
export class TransitionScheduler {
  private readonly timers = new Map<string, () => void>();
  private readonly handlers = new Map<string, { repo: Repo<Transitional>; handler: TransitionHandler }>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly clock: Clock,
    /** Set by the cloud when it learns the server's logger (see embeddedCloud). */
    public log: Logger,
  ) {}

  /** Declare how transitions of `repo`'s kind are applied. */
  register<R extends Transitional>(repo: Repo<R>, handler: TransitionHandler): void {
    this.handlers.set(repo.kind, { repo: repo, handler });
  }

  /** Arm (or re-arm) the timer of one row's transition. */
  schedule(kind: string, project: string, id: string, at: number): void {
    if (this.closed) return;
    const key = `${kind}/${project}/${id}`;
    this.timers.get(key)?.();
    const cancel = this.clock.setTimer(
      () => {
        this.timers.delete(key);
        this.fire(kind, project, id);
      },
      Math.max(0, at - this.clock.now()),
    );
    this.timers.set(key, cancel);
  }

  private fire(kind: string, project: string, id: string): void {
    const h = this.handlers.get(kind);
    if (!h || this.closed) return;
    const p = h.handler(project, id).catch((err: unknown) => {
      this.log.warn({ err, kind, project, id }, 'embedded cloud: transition failed; retrying in 1 s');
      if (!this.closed) this.schedule(kind, project, id, this.clock.now() + 1000);
    });
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /** Apply the row's transition now if it is due; returns the row as it is afterwards. */
  async settle<R extends Transitional>(repo: Repo<R>, row: Row<R>): Promise<Row<R> | undefined> {
    const t = row.rec.transition;
    if (!t || t.at > this.clock.now()) return row;
    const h = this.handlers.get(repo.kind);
    if (!h) return row;
    await h.handler(row.project, row.id);
    return repo.get(row.project, row.id);
  }

  /** Settle every row of a list, dropping the ones that are gone. */
  async settleAll<R extends Transitional>(repo: Repo<R>, rows: Row<R>[]): Promise<Row<R>[]> {
    const out: Row<R>[] = [];
    for (const row of rows) {
      const r = await this.settle(repo, row);
      if (r) out.push(r);
    }
    return out;
  }

  /** After a restart: re-arm the timer of every stored pending transition. */
  async resume(): Promise<number> {
    let n = 0;
    for (const [kind, { repo }] of this.handlers) {
      for (const row of await repo.list()) {
        const t = row.rec.transition;
        if (!t) continue;
        this.schedule(kind, row.project, row.id, t.at);
        n++;
      }
    }
    return n;
  }

  /** Number of armed timers (tests, dashboard). */
  get pending(): number {
    return this.timers.size;
  }

  /** Cancel every timer and wait for handlers under way. */
  async close(): Promise<void> {
    this.closed = true;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }
}
