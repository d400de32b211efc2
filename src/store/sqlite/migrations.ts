/** Numbered schema migrations of the SQLite engine. Append only; never edit a released one. */
export const sqliteMigrations: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'objects, feed, leases',
    sql: `
      CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
      INSERT INTO meta (key, value) VALUES ('revision', 0), ('compacted', 0);
      CREATE TABLE objects (
        type TEXT NOT NULL,
        namespace TEXT NOT NULL,
        name TEXT NOT NULL,
        uid TEXT NOT NULL,
        seq INTEGER NOT NULL,
        rv INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (type, namespace, name)
      );
      CREATE UNIQUE INDEX objects_uid ON objects (uid);
      CREATE INDEX objects_type_seq ON objects (type, seq);
      CREATE INDEX objects_type_ns_seq ON objects (type, namespace, seq);
      CREATE TABLE feed (
        revision INTEGER PRIMARY KEY,
        type TEXT NOT NULL,
        event TEXT NOT NULL,
        data TEXT NOT NULL
      );
      CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_ms INTEGER NOT NULL
      );
    `,
  },
];
