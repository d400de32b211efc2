import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { PostgresStore, type ObjectStore } from '../../src/store/index.ts';
import { storeSuite } from './store-suite.ts';

/**
 * The store suite on PostgreSQL, in a schema of its own that is dropped afterwards. Runs when
 * MAGNETAR_TEST_PG_URL points at a server; fails instead of skipping under
 * MAGNETAR_REQUIRE_REAL_CLIENTS=1.
 */
const url = process.env.MAGNETAR_TEST_PG_URL;
const schema = `t_store_${randomBytes(4).toString('hex')}`;

if (!url) {
  if (process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1') {
    test('PostgreSQL store suite', () => {
      assert.fail(
        'MAGNETAR_TEST_PG_URL not set, and MAGNETAR_REQUIRE_REAL_CLIENTS=1 requires the PostgreSQL tests',
      );
    });
  } else {
    test('PostgreSQL store suite', { skip: 'MAGNETAR_TEST_PG_URL not set' }, () => undefined);
  }
} else {
  const pgUrl = url;
  const open = () => PostgresStore.connect({ url: pgUrl, schema, pool: 4 });

  after(async () => {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });

  storeSuite('postgres', open, { persistent: true });

  describe('object store (postgres, several processes)', () => {
    test('a write through one connection wakes onChange on another, whose feed sees it', async () => {
      const a = await open();
      const b = await open();
      try {
        const from = await b.currentRevision();
        const woke = new Promise<void>((resolve) => {
          const off = b.onChange(() => {
            off();
            resolve();
          });
        });
        const created = await a.create({
          apiVersion: 'test.magnetar.io/v1',
          kind: 'Remote',
          metadata: { name: 'x', namespace: 'p' },
          spec: {},
        });
        await woke;
        const feed = await b.changes(from, { types: ['Remote.test.magnetar.io'] });
        assert.deepEqual(
          feed.map((e) => e.object.metadata.uid),
          [created.metadata.uid],
        );
        assert.deepEqual(await b.get('Remote.test.magnetar.io', 'p', 'x'), created);
      } finally {
        await a.close();
        await b.close();
      }
    });

    test('concurrent writers on separate connections never let a watcher skip a revision', async () => {
      const writers = await Promise.all([open(), open(), open()]);
      const reader = await open();
      try {
        const from = await reader.currentRevision();
        let seen = from;
        const observed: number[] = [];
        let done = false;
        // A watcher polling while writers commit: every revision it sees must be the next one.
        const watch = (async () => {
          while (!done || seen < (await reader.currentRevision())) {
            const batch = await reader.changes(seen, { types: ['Race.test.magnetar.io'] });
            for (const e of batch) {
              observed.push(e.revision);
              seen = e.revision;
            }
          }
        })();
        await Promise.all(
          writers.map((w, wi) =>
            Promise.all(
              Array.from({ length: 25 }, (_, i) =>
                w.create({
                  apiVersion: 'test.magnetar.io/v1',
                  kind: 'Race',
                  metadata: { name: `r${wi}-${i}`, namespace: 'p' },
                  spec: {},
                }),
              ),
            ),
          ),
        );
        done = true;
        await watch;
        assert.equal(observed.length, 75);
        assert.deepEqual(
          observed,
          Array.from({ length: 75 }, (_, i) => from + 1 + i),
        );
      } finally {
        for (const s of [...writers, reader]) await s.close();
      }
    });

    test('concurrent connects migrate the schema once', async () => {
      const fresh = `${schema}_m`;
      const stores: ObjectStore[] = await Promise.all(
        Array.from({ length: 4 }, () => PostgresStore.connect({ url: pgUrl, schema: fresh, pool: 2 })),
      );
      try {
        const client = new pg.Client({ connectionString: pgUrl });
        await client.connect();
        const res = await client.query<{ n: string }>(
          `SELECT count(*) AS n FROM "${fresh}".schema_migrations`,
        );
        await client.query(`DROP SCHEMA "${fresh}" CASCADE`).catch(() => undefined);
        await client.end();
        assert.equal(Number(res.rows[0]?.n), 1);
      } finally {
        for (const s of stores) await s.close().catch(() => undefined);
      }
    });

    test('a store whose connections are killed (server restart, failover) keeps working and keeps waking watchers', async () => {
      const appName = `magnetar-kill-${randomBytes(3).toString('hex')}`;
      const victim = await PostgresStore.connect({ url: pgUrl, schema, pool: 2, applicationName: appName });
      const writer = await open();
      try {
        await victim.currentRevision(); // a pooled connection now sits idle
        // Killed synchronously (the event loop is blocked, as in a busy process), so the pool has
        // not yet noticed when the next statement is sent on the dead connection.
        const killed = execFileSync(
          'psql',
          [
            pgUrl,
            '-tAc',
            `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name IN ('${appName}', '${appName}-listen')`,
          ],
          { encoding: 'utf8' },
        );
        assert.ok(Number(killed.trim()) >= 2, 'the pooled and the LISTEN connection were killed');
        const rev = await victim.currentRevision();
        assert.ok(rev >= 0, 'a read right after the kill succeeds');
        // the LISTEN connection comes back on its own and wakes onChange for another process's write
        let woke = false;
        victim.onChange(() => (woke = true));
        for (let i = 0; i < 100 && !woke; i++) {
          if (i % 10 === 0) {
            await writer.create({
              apiVersion: 'test.magnetar.io/v1',
              kind: 'Revived',
              metadata: { name: `r${i}`, namespace: 'p' },
              spec: {},
            });
          }
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.ok(woke, 'onChange fired again after the LISTEN connection was lost');
        const created = await victim.create({
          apiVersion: 'test.magnetar.io/v1',
          kind: 'Revived',
          metadata: { name: 'by-victim', namespace: 'p' },
          spec: {},
        });
        assert.equal(created.metadata.name, 'by-victim');
      } finally {
        await victim.close();
        await writer.close();
      }
    });

    test('a bad schema name is refused before anything is created', async () => {
      await assert.rejects(
        PostgresStore.connect({ url: pgUrl, schema: 'x"; DROP TABLE y; --' }),
        /invalid PostgreSQL schema name/,
      );
    });

    test('an unreachable server is UnavailableError', async () => {
      await assert.rejects(
        PostgresStore.connect({ url: 'postgres://nobody:x@127.0.0.1:1/none', schema }),
        (e: unknown) => e instanceof Error && e.name === 'UnavailableError',
      );
    });
  });
}
