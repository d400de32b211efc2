/**
 * Numbered schema migrations of the PostgreSQL engine. Append only; never edit a released one.
 * They run inside the store's schema (search_path is set to it), in one transaction, under an
 * advisory lock (see migrate.ts).
 *
 * Objects are kept as JSON text (`data`, the exact bytes the engine wrote, key order kept) with
 * the labels copied into a JSONB column so that label selectors run in SQL.
 */
export const postgresMigrations: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'objects, feed, leases',
    sql: `
      CREATE TABLE meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
      INSERT INTO meta (key, value) VALUES ('revision', 0), ('compacted', 0);
      CREATE TABLE objects (
        type TEXT NOT NULL,
        namespace TEXT NOT NULL,
        name TEXT NOT NULL,
        uid TEXT NOT NULL,
        seq BIGINT NOT NULL,
        rv BIGINT NOT NULL,
        labels JSONB NOT NULL DEFAULT '{}',
        data TEXT NOT NULL,
        PRIMARY KEY (type, namespace, name)
      );
      CREATE UNIQUE INDEX objects_uid ON objects (uid);
      CREATE INDEX objects_type_seq ON objects (type, seq);
      CREATE INDEX objects_type_ns_seq ON objects (type, namespace, seq);
      CREATE TABLE feed (
        revision BIGINT PRIMARY KEY,
        type TEXT NOT NULL,
        event TEXT NOT NULL CHECK (event IN ('ADDED', 'MODIFIED', 'DELETED')),
        data TEXT NOT NULL
      );
      CREATE INDEX feed_type_revision ON feed (type, revision);
      CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_ms BIGINT NOT NULL
      );
    `,
  },
];
