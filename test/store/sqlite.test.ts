import { after, before } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/index.ts';
import { storeSuite } from './store-suite.ts';

storeSuite('sqlite :memory:', async () => new SqliteStore({ path: ':memory:' }));

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'magnetar-store-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});
storeSuite('sqlite file (WAL)', async () => new SqliteStore({ path: join(dir, 'sub', 'store.sqlite') }), {
  persistent: true,
});
