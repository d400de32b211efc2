import pg from 'pg';

/** Options of {@link ChangeListener}. */
export interface ChangeListenerOptions {
  url: string;
  channel: string;
  applicationName: string;
  /** Called for every notification payload, and with `undefined` after a reconnect (notifications may have been missed). */
  onNotify: (payload: string | undefined) => void;
  /** Reconnect backoff cap in milliseconds. @default 10000 */
  maxDelayMs?: number;
}

/**
 * A dedicated connection that LISTENs on the store's channel and reconnects when the
 * connection drops. Pooled connections cannot LISTEN: the pool hands them to other queries.
 */
export class ChangeListener {
  private client: pg.Client | undefined;
  private closed = false;
  private delayMs = 250;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ChangeListenerOptions) {}

  /** Connect and LISTEN; rejects when the first connection fails. */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.url,
      application_name: this.options.applicationName,
    });
    client.on('notification', (msg) => this.options.onNotify(msg.payload));
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    await client.connect();
    try {
      await client.query(`LISTEN "${this.options.channel}"`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.delayMs = 250;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, this.options.maxDelayMs ?? 10_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect().then(
        () => {
          if (!this.closed) this.options.onNotify(undefined);
        },
        () => this.scheduleReconnect(),
      );
    }, delay);
    this.retryTimer.unref();
  }

  /** True while the LISTEN connection is up. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  async stop(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => undefined);
  }
}
