import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { ApiObject, NewObject } from '../src/domain/index.ts';
import { PostgresStore, SqliteStore, type ObjectStore } from '../src/store/index.ts';

/**
 * Object store throughput: create, get by uid, update, a 50-item page, on SQLite (memory and
 * WAL file) and on PostgreSQL when MAGNETAR_TEST_PG_URL is set (in a throw-away schema).
 * Each measurement runs for a fixed time budget, so the whole benchmark stays under 30 s.
 */
const BUDGET_MS = 1_000;
const PAGE = 50;

interface Figure {
  engine: string;
  op: string;
  ops: number;
  perSec: number;
  p50: number;
  p99: number;
}

function widget(i: number): NewObject {
  return {
    apiVersion: 'bench.magnetar.io/v1',
    kind: 'Widget',
    metadata: {
      name: `w-${i}`,
      namespace: `project-${i % 10}`,
      labels: { tier: i % 2 === 0 ? 'web' : 'db', index: String(i) },
    },
    spec: {
      size: i,
      flavor: 'm1.small',
      image: 'ubuntu-24.04',
      nested: { a: [1, 2, 3], b: 'text '.repeat(10) },
    },
  };
}

async function measure(
  engine: string,
  op: string,
  fn: (i: number) => Promise<unknown>,
  concurrency = 1,
): Promise<Figure> {
  const latencies: number[] = [];
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (performance.now() - started < BUDGET_MS) {
      const i = next++;
      const t = performance.now();
      await fn(i);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  return {
    engine,
    op,
    ops: latencies.length,
    perSec: latencies.length / elapsed,
    p50: pct(0.5),
    p99: pct(0.99),
  };
}

async function benchEngine(engine: string, store: ObjectStore): Promise<Figure[]> {
  const type = 'Widget.bench.magnetar.io';
  const figures: Figure[] = [];
  const created: ApiObject[] = [];
  figures.push(
    await measure(engine, 'create', async (i) => {
      created.push(await store.create(widget(i)));
    }),
  );
  // enough objects for pages and lookups even when creates were slow
  for (let i = created.length; created.length < 2 * PAGE; i++)
    created.push(await store.create(widget(1_000_000 + i)));
  const uids = created.map((o) => o.metadata.uid);
  figures.push(await measure(engine, 'get by uid', (i) => store.getByUid(type, uids[i % uids.length]!)));
  figures.push(
    await measure(engine, 'get by name', (i) => {
      const o = created[i % created.length]!;
      return store.get(type, o.metadata.namespace, o.metadata.name);
    }),
  );
  const latest = new Map<number, ApiObject>(created.map((o, i) => [i, o]));
  figures.push(
    await measure(engine, 'update', async (i) => {
      const slot = i % created.length;
      const o = latest.get(slot)!;
      latest.set(slot, await store.update({ ...o, spec: { ...o.spec, size: i } }));
    }),
  );
  figures.push(await measure(engine, `list page of ${PAGE}`, () => store.list(type, { limit: PAGE })));
  figures.push(
    await measure(engine, `list page of ${PAGE}, selector`, () =>
      store.list(type, { limit: PAGE, labelSelector: [{ key: 'tier', operator: 'In', values: ['web'] }] }),
    ),
  );
  if (engine.startsWith('postgres')) {
    let n = 0;
    figures.push(
      await measure(engine, 'create, 8 concurrent', () => store.create(widget(2_000_000 + n++)), 8),
    );
  }
  return figures;
}

function print(figures: Figure[]): void {
  const rows = figures.map((f) => [
    f.engine,
    f.op,
    f.perSec.toFixed(0),
    f.p50.toFixed(3),
    f.p99.toFixed(3),
    String(f.ops),
  ]);
  const head = ['engine', 'operation', 'ops/s', 'p50 ms', 'p99 ms', 'samples'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}

/** Print ops/s of the store's main operations on each available engine. */
export async function benchStore(): Promise<void> {
  const figures: Figure[] = [];

  const memory = new SqliteStore({ path: ':memory:' });
  try {
    figures.push(...(await benchEngine('sqlite :memory:', memory)));
  } finally {
    await memory.close();
  }

  const dir = mkdtempSync(join(tmpdir(), 'magnetar-bench-'));
  const file = new SqliteStore({ path: join(dir, 'bench.sqlite') });
  try {
    figures.push(...(await benchEngine('sqlite file (WAL)', file)));
  } finally {
    await file.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const url = process.env.MAGNETAR_TEST_PG_URL;
  if (url) {
    const schema = `bench_${randomBytes(4).toString('hex')}`;
    const store = await PostgresStore.connect({ url, schema });
    try {
      figures.push(...(await benchEngine('postgres', store)));
    } finally {
      await store.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  } else {
    console.log('(postgres skipped: MAGNETAR_TEST_PG_URL not set)');
  }
  print(figures);
}
