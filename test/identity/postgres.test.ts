import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ManualClock } from '../../src/domain/index.ts';
import { LocalIdentity, type BootstrapCredential } from '../../src/identity/index.ts';
import { PostgresStore } from '../../src/store/index.ts';
import { FAST_SCRYPT } from './helpers.ts';

/**
 * Identity on PostgreSQL with two processes (two stores, two identities) in a schema of their
 * own. Runs when MAGNETAR_TEST_PG_URL points at a server; fails instead of skipping under
 * MAGNETAR_REQUIRE_REAL_CLIENTS=1.
 */
const url = process.env.MAGNETAR_TEST_PG_URL;
const required = process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1';
const schema = `t_identity_${randomBytes(4).toString('hex')}`;

async function passwordToken(identity: LocalIdentity, c: BootstrapCredential): Promise<string> {
  const t = await identity.authenticate({
    identity: {
      method: 'password',
      user: { name: c.username, domain: { name: 'Default' } },
      password: c.password,
    },
    scope: { type: 'project', project: { name: c.projectName, domain: { name: 'Default' } } },
  });
  return t.token;
}

/** Wait (bounded) until `check` holds: the other process learns through LISTEN/NOTIFY, asynchronously. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`not within 2 s: ${what}`);
}

if (!url) {
  void test('identity on PostgreSQL', { skip: required ? false : 'MAGNETAR_TEST_PG_URL not set' }, () => {
    assert.fail(
      'MAGNETAR_TEST_PG_URL not set, and MAGNETAR_REQUIRE_REAL_CLIENTS=1 requires the PostgreSQL tests',
    );
  });
} else {
  const pgUrl = url;
  after(async () => {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });

  void test('two processes bootstrap once, share the signing key, and see each other’s changes without waiting for the staleness check', async () => {
    const clock = new ManualClock();
    const storeA = await PostgresStore.connect({ url: pgUrl, schema, pool: 3 });
    const storeB = await PostgresStore.connect({ url: pgUrl, schema, pool: 3 });
    const opts = { clock, baseUrl: () => 'http://x', scryptCost: FAST_SCRYPT, maxStalenessMs: 60_000 };
    const [a, b] = await Promise.all([
      LocalIdentity.open({ store: storeA, ...opts }),
      LocalIdentity.open({ store: storeB, ...opts }),
    ]);
    try {
      // Both start at once: exactly one bootstrap wins.
      const [ra, rb] = await Promise.all([a.bootstrap(), b.bootstrap()]);
      assert.equal([ra, rb].filter((r) => r.firstStart).length, 1);
      const creds = (ra.firstStart ? ra : rb).credentials;
      assert.equal(await storeA.count('User.identity.magnetar.io'), 4);

      const demo = creds.find((c) => c.username === 'demo')!;
      const token = await passwordToken(a, demo);
      await eventually(
        async () => (await b.validate(token).catch(() => undefined))?.userName === 'demo',
        'B accepts A’s token',
      );

      const admin = await a.validate(
        await passwordToken(
          a,
          creds.find((c) => c.username === 'admin')!,
        ),
      );
      const demoId = (await a.validate(token)).userId;
      await a.users.update(admin, demoId, { enabled: false });
      await assert.rejects(a.validate(token), /disabled/);
      // The virtual clock does not move: only the notification can tell B.
      await eventually(
        async () => (await b.validate(token).catch(() => undefined)) === undefined,
        'B refuses the disabled user',
      );
    } finally {
      await a.close();
      await b.close();
      await storeA.close();
      await storeB.close();
    }
  });
}
