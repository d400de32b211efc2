import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import test from 'node:test';
import {
  clusterBackupSettings,
  defaultBackupPolicy,
  parseBackupRetention,
  parseBackupSchedule,
} from '../../src/domain/index.ts';
import { SqliteStore } from '../../src/store/index.ts';
import {
  BackupKeys,
  SnapshotIntegrityError,
  decryptSnapshot,
  encryptSnapshot,
} from '../../src/workload/index.ts';

const header = { clusterUid: 'c-1', backupUid: 'b-1', emulated: true };
const secret = Buffer.from('{"password":"hunter2"}');

void test('an encrypted snapshot decrypts with its data key and does not contain the plaintext', () => {
  const key = randomBytes(32);
  const file = encryptSnapshot(key, header, secret);
  assert.ok(!file.includes(secret));
  const { header: h, plaintext } = decryptSnapshot(key, file);
  assert.deepEqual(plaintext, secret);
  assert.equal(h.clusterUid, 'c-1');
  assert.equal(h.alg, 'AES-256-GCM');
});

void test('a flipped ciphertext byte, an edited header, a truncated file or another key are each refused', () => {
  const key = randomBytes(32);
  const file = encryptSnapshot(key, header, secret);

  const flipped = Buffer.from(file);
  flipped[flipped.length - 20] = flipped[flipped.length - 20]! ^ 1;
  assert.throws(() => decryptSnapshot(key, flipped), SnapshotIntegrityError);

  // Claim the snapshot belongs to another cluster: the header is authenticated.
  const edited = Buffer.from(
    file.toString('latin1').replace('"clusterUid":"c-1"', '"clusterUid":"c-2"'),
    'latin1',
  );
  assert.throws(() => decryptSnapshot(key, edited), /failed authentication/);

  assert.throws(() => decryptSnapshot(key, file.subarray(0, file.length - 5)), /failed authentication/);
  assert.throws(
    () => decryptSnapshot(key, file.subarray(0, 10)),
    /not an encrypted Magnetar etcd snapshot|truncated/,
  );
  assert.throws(
    () => decryptSnapshot(randomBytes(32), file),
    /encrypted with data key .* but the cluster's data key is/,
  );
});

void test('a cluster data key is stored sealed, survives reopening, and a missing or foreign key is a clear error', async () => {
  const store = new SqliteStore({ path: ':memory:' });
  try {
    const master = randomBytes(32);
    const keys = new BackupKeys(store, master);
    const a = await keys.ensure('proj', 'cluster-1');
    assert.deepEqual(await new BackupKeys(store, master).get('proj', 'cluster-1'), a);
    assert.equal((await keys.ensure('proj', 'cluster-1')).keyId, a.keyId, 'one key per cluster');
    const raw = JSON.stringify(await store.list('EtcdBackupKey.backup.magnetar.io'));
    assert.ok(!raw.includes(a.key.toString('base64')), 'the key is not stored in clear');
    await assert.rejects(
      new BackupKeys(store, randomBytes(32)).get('proj', 'cluster-1'),
      /cannot be unsealed/,
    );
    await keys.delete('proj', 'cluster-1');
    await assert.rejects(keys.get('proj', 'cluster-1'), /is missing/);
  } finally {
    await store.close();
  }
});

void test('schedules are off or day/hour/minute intervals of at least 15 minutes; retention is a count of at least 1', () => {
  assert.deepEqual(parseBackupSchedule('6h'), { intervalMs: 6 * 3_600_000 });
  assert.deepEqual(parseBackupSchedule('1d12h'), { intervalMs: 36 * 3_600_000 });
  assert.deepEqual(parseBackupSchedule('30m'), { intervalMs: 1_800_000 });
  assert.deepEqual(parseBackupSchedule('off'), { intervalMs: null });
  assert.match((parseBackupSchedule('5m') as { error: string }).error, /shorter than the minimum of 15m/);
  assert.match((parseBackupSchedule('0 3 * * *') as { error: string }).error, /is not an interval/);
  assert.deepEqual(parseBackupRetention('3'), { count: 3 });
  assert.ok('error' in parseBackupRetention('0'));
  const s = clusterBackupSettings(defaultBackupPolicy, {});
  assert.deepEqual(
    { intervalMs: s.intervalMs, retention: s.retention, keepOnDelete: s.keepOnDelete },
    { intervalMs: 24 * 3_600_000, retention: 7, keepOnDelete: true },
  );
  assert.equal(
    clusterBackupSettings(defaultBackupPolicy, { etcd_backup_keep_on_delete: 'false' }).keepOnDelete,
    false,
  );
  const typo = clusterBackupSettings(defaultBackupPolicy, { etcd_backup_schedule: 'every tuesday' });
  assert.equal(typo.intervalMs, 24 * 3_600_000, 'a typo falls back to the policy, never to no backups');
  assert.match(typo.problems[0]!, /is not an interval/);
  assert.equal(clusterBackupSettings(defaultBackupPolicy, { etcd_backup_schedule: 'off' }).intervalMs, null);
});
