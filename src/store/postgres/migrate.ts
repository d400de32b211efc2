import type pg from 'pg';
import { postgresMigrations } from './migrations.ts';

/**
 * Apply the pending migrations of `schema` (quoted) in one transaction. A transaction-scoped
 * advisory lock keyed by the schema makes concurrent starters wait for each other instead of
 * racing to create the same tables; DDL in PostgreSQL is transactional, so a failed migration
 * leaves nothing behind.
 */
export async function migrate(pool: pg.Pool, schemaName: string, quoted: string): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`magnetar-migrate:${schemaName}`]);
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schemaName]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${quoted}`);
    await client.query(`SET LOCAL search_path TO ${quoted}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    const done = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(done.rows.map((r) => r.version));
    for (const m of postgresMigrations) {
      if (applied.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        m.version,
        m.name,
      ]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
      broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    });
    throw err;
  } finally {
    // a connection that could not roll back is destroyed, not returned to the pool
    client.release(broken);
  }
}
