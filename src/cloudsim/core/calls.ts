/**
 * How many calls each operation of the embedded cloud has answered since it started
 * (`compute.servers.create`, the names fault rules use), for `GET /cloud/_calls`: what
 * Magnetar asks of a cloud per cluster, the load a real cloud's APIs would carry.
 */
export class CallCounts {
  private readonly counts = new Map<string, number>();

  /** One call of `operation`, whatever its answer (an injected failure counts). */
  count(operation: string): void {
    this.counts.set(operation, (this.counts.get(operation) ?? 0) + 1);
  }

  /** Calls by operation, most called first, and their total. */
  snapshot(): { total: number; calls: Record<string, number> } {
    let total = 0;
    const calls: Record<string, number> = {};
    for (const [op, n] of [...this.counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) {
      calls[op] = n;
      total += n;
    }
    return { total, calls };
  }
}
