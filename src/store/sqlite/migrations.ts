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
  {
    version: 2,
    name: 'label index',
    // Lists with an equality selector (`app=web`, In with one value) read the matching rows
    // through this index instead of parsing every object of the type. Triggers keep it in step
    // with every write path, in the write's own transaction.
    sql: `
      CREATE TABLE object_labels (
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL
      );
      CREATE INDEX object_labels_kv ON object_labels (type, key, value, seq);
      CREATE INDEX object_labels_seq ON object_labels (seq);
      INSERT INTO object_labels (seq, type, key, value)
        SELECT o.seq, o.type, j.key, j.value FROM objects o, json_each(o.data, '$.metadata.labels') j;
      CREATE TRIGGER objects_labels_insert AFTER INSERT ON objects BEGIN
        INSERT INTO object_labels (seq, type, key, value)
          SELECT NEW.seq, NEW.type, key, value FROM json_each(NEW.data, '$.metadata.labels');
      END;
      CREATE TRIGGER objects_labels_update AFTER UPDATE OF data ON objects
      WHEN json_extract(OLD.data, '$.metadata.labels') IS NOT json_extract(NEW.data, '$.metadata.labels')
      BEGIN
        DELETE FROM object_labels WHERE seq = OLD.seq;
        INSERT INTO object_labels (seq, type, key, value)
          SELECT NEW.seq, NEW.type, key, value FROM json_each(NEW.data, '$.metadata.labels');
      END;
      CREATE TRIGGER objects_labels_delete AFTER DELETE ON objects BEGIN
        DELETE FROM object_labels WHERE seq = OLD.seq;
      END;
    `,
  },
  {
    version: 3,
    name: 'label index kept by the store',
    // The store writes the label rows itself, and only when an object's labels change: the
    // update trigger parsed the old and the new document of every write to compare them, about
    // a tenth of a write's cost, though labels almost never change. Deletes keep their trigger.
    sql: `
      DROP TRIGGER objects_labels_insert;
      DROP TRIGGER objects_labels_update;
    `,
  },
  {
    version: 4,
    name: 'object counts',
    // Counting a type's objects in a namespace walked the index over every one of them: the
    // embedded cloud counts a project's ports, rules and servers for its quota on each create,
    // which made a create in a project with thousands of them cost milliseconds. Triggers keep
    // one count per type and namespace in step with every insert and delete.
    sql: `
      CREATE TABLE object_counts (
        type TEXT NOT NULL,
        namespace TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (type, namespace)
      ) WITHOUT ROWID;
      INSERT INTO object_counts (type, namespace, n)
        SELECT type, namespace, count(*) FROM objects GROUP BY type, namespace;
      CREATE TRIGGER objects_count_insert AFTER INSERT ON objects BEGIN
        INSERT INTO object_counts (type, namespace, n) VALUES (NEW.type, NEW.namespace, 1)
          ON CONFLICT (type, namespace) DO UPDATE SET n = n + 1;
      END;
      CREATE TRIGGER objects_count_delete AFTER DELETE ON objects BEGIN
        UPDATE object_counts SET n = n - 1 WHERE type = OLD.type AND namespace = OLD.namespace;
      END;
    `,
  },
  {
    version: 5,
    name: 'label value counts',
    // Counting a label's values in a namespace (the embedded cloud's quota usage: a label per
    // server with its cores and RAM) walked every label row of the type and looked up each row's
    // object: every server create cost time in proportion to the servers already there. One count
    // per type, namespace, label key and value is kept in step with the label rows instead. When
    // an object is deleted its row is gone before its label rows are: the object's delete
    // trigger takes the counts down with the namespace the row had.
    sql: `
      CREATE TABLE label_counts (
        type TEXT NOT NULL,
        namespace TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (type, namespace, key, value)
      ) WITHOUT ROWID;
      INSERT INTO label_counts (type, namespace, key, value, n)
        SELECT l.type, o.namespace, l.key, l.value, count(*) FROM object_labels l
          JOIN objects o ON o.type = l.type AND o.seq = l.seq
         GROUP BY l.type, o.namespace, l.key, l.value;
      CREATE TRIGGER object_labels_count_insert AFTER INSERT ON object_labels BEGIN
        INSERT INTO label_counts (type, namespace, key, value, n)
          SELECT NEW.type, o.namespace, NEW.key, NEW.value, 1 FROM objects o
           WHERE o.type = NEW.type AND o.seq = NEW.seq
          ON CONFLICT (type, namespace, key, value) DO UPDATE SET n = n + 1;
      END;
      CREATE TRIGGER object_labels_count_delete AFTER DELETE ON object_labels BEGIN
        UPDATE label_counts SET n = n - 1
         WHERE type = OLD.type AND key = OLD.key AND value = OLD.value
           AND namespace = (SELECT namespace FROM objects WHERE type = OLD.type AND seq = OLD.seq);
      END;
      DROP TRIGGER objects_labels_delete;
      CREATE TRIGGER objects_labels_delete AFTER DELETE ON objects BEGIN
        UPDATE label_counts SET n = n - 1
         WHERE type = OLD.type AND namespace = OLD.namespace
           AND (key, value) IN (SELECT key, value FROM object_labels WHERE seq = OLD.seq);
        DELETE FROM object_labels WHERE seq = OLD.seq;
      END;
    `,
  },
  {
    version: 6,
    name: 'label value counts dropped',
    // The counts of version 5 cost more than they saved: the embedded cloud's index labels carry
    // names and IDs, so nearly every label row had a count row of its own, written with it, and
    // an object's delete looked its counts up by a scan of its type and namespace. With a
    // thousand clusters that made creates and deletes slower than the quota count it sped up.
    sql: `
      DROP TRIGGER object_labels_count_insert;
      DROP TRIGGER object_labels_count_delete;
      DROP TRIGGER objects_labels_delete;
      DROP TABLE label_counts;
      CREATE TRIGGER objects_labels_delete AFTER DELETE ON objects BEGIN
        DELETE FROM object_labels WHERE seq = OLD.seq;
      END;
    `,
  },
  {
    version: 7,
    name: 'counts of counted label keys',
    // Version 5 without its cost: counts are kept only for the label keys someone counts by (a
    // key is registered by its first count, in `counted_labels`), so the name and ID labels of
    // the embedded cloud write no count rows. The store keeps the counts where it writes the
    // label rows, in the same transaction (no trigger runs for the other labels).
    sql: `
      CREATE TABLE counted_labels (
        type TEXT NOT NULL,
        key TEXT NOT NULL,
        PRIMARY KEY (type, key)
      ) WITHOUT ROWID;
      CREATE TABLE label_counts (
        type TEXT NOT NULL,
        key TEXT NOT NULL,
        namespace TEXT NOT NULL,
        value TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (type, key, namespace, value)
      ) WITHOUT ROWID;
    `,
  },
];
