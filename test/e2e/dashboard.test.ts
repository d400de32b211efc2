import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { parse } from 'yaml';
import { testConfig } from '../../src/cli/load-config.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';

/**
 * The dashboard in headless Chromium (Debian's `chromium` package, never a downloaded browser).
 * Skips when the browser is missing, unless MAGNETAR_REQUIRE_REAL_CLIENTS=1 (then it fails).
 * With MAGNETAR_SCREENSHOTS=1 it saves the main pages to docs/screenshots/.
 *
 * The server runs with the test configuration on a store file, as `npm start` runs (the
 * embedded cloud on its own thread, reached through `/cloud`), and the embedded cloud and the
 * emulated workload clusters without simulated latency, so a cluster is complete in seconds. The test never
 * sleeps: it waits for what the page shows.
 */
const CHROMIUM = '/usr/bin/chromium';
const missing = !existsSync(CHROMIUM);
if (missing && process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1') {
  test('chromium is installed (MAGNETAR_REQUIRE_REAL_CLIENTS=1)', () =>
    assert.fail(`${CHROMIUM} is missing`));
}
const SHOTS =
  process.env.MAGNETAR_SCREENSHOTS === '1'
    ? resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots')
    : null;
const LAPTOP = { width: 1200, height: 800 };
const PHONE = { width: 390, height: 844 };

interface Auth {
  username: string;
  password: string;
  project_name: string;
}
interface Kubeconfig {
  'current-context': string;
  contexts: { name: string; context: { cluster: string; user: string } }[];
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { name: string; user: { 'client-certificate-data': string; 'client-key-data': string } }[];
}

// The tests are independent (each has its own tab and account), so they run side by side: the
// short ones finish while the lifecycle waits for the provisioning engine.
void describe(
  'dashboard in a browser',
  { skip: missing ? `${CHROMIUM} is not installed` : false, concurrency: true },
  () => {
    let m: Magnetar;
    let dir: string;
    let browser: Browser;
    let context: BrowserContext;
    let auth: Record<string, Auth>;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'magnetar-e2e-'));
      // The server and the browser start side by side.
      // launch() always starts from a fresh temporary profile (it refuses an explicit --user-data-dir).
      const [server, chrome] = await Promise.allSettled([
        // on a store file, as `npm start` runs: the embedded cloud on its own thread behind /cloud
        startMagnetar({
          config: testConfig({ dataDir: dir, store: { engine: 'sqlite', url: 'magnetar.sqlite' } }),
        }),
        chromium.launch({
          executablePath: CHROMIUM,
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
          ],
        }),
      ]);
      // Keep what did start, so that after() closes it even when the other failed.
      if (server.status === 'fulfilled') m = server.value;
      if (chrome.status === 'fulfilled') browser = chrome.value;
      if (server.status === 'rejected') throw server.reason;
      if (chrome.status === 'rejected') throw chrome.reason;
      const clouds = parse(readFileSync(join(dir, 'clouds.yaml'), 'utf8')) as {
        clouds: Record<string, { auth: Auth }>;
      };
      auth = Object.fromEntries(Object.entries(clouds.clouds).map(([k, v]) => [k, v.auth]));
      // One context for the whole run: each test has its own tab, and a tab's sessionStorage
      // (where the dashboard keeps its token) is its own.
      context = await browser.newContext({ acceptDownloads: true, viewport: LAPTOP });
      if (SHOTS) mkdirSync(SHOTS, { recursive: true });
    });
    after(async () => {
      await browser?.close();
      await m?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Save the page (all of it, or what the screen shows) when screenshots are asked for. */
    async function shot(page: Page, name: string, fullPage = true): Promise<void> {
      if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
    }
    async function newPage(): Promise<Page> {
      const page = await context.newPage();
      page.setDefaultTimeout(60_000);
      return page;
    }
    async function login(cloud: string): Promise<Page> {
      const page = await newPage();
      await page.goto(`${m.url}/`, { waitUntil: 'load' });
      assert.match(page.url(), /\/dashboard\/$/);
      const a = auth[cloud]!;
      await page.getByLabel('User name').fill(a.username);
      await page.getByLabel('Password').fill(a.password);
      await page.getByLabel('Project (optional)').fill(a.project_name);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Clusters' }).waitFor();
      return page;
    }
    /** Rows of a table as { header: cell text }. */
    async function rows(page: Page, table: string): Promise<Record<string, string>[]> {
      // No named functions inside: the test's compiler would wrap them in a helper the page lacks.
      return page.locator(table).evaluate((t: Element): Record<string, string>[] => {
        const heads = Array.from(t.querySelectorAll('thead th'), (h) => (h as HTMLElement).innerText.trim());
        return Array.from(t.querySelectorAll('tbody tr'), (tr) =>
          Object.fromEntries(
            Array.from(tr.querySelectorAll('td'), (td, i) => [heads[i] ?? String(i), td.innerText.trim()]),
          ),
        );
      });
    }

    void test('API clients asking / still get the Magnum version document', async () => {
      const res = await fetch(`${m.url}/`, { headers: { accept: 'application/json' } });
      assert.equal(res.status, 200);
      assert.ok('versions' in ((await res.json()) as object));
    });

    void test('a wrong password typed with the keyboard alone is refused in words next to the form', async () => {
      const page = await newPage();
      await page.goto(`${m.url}/dashboard/`);
      await page.getByRole('heading', { name: 'Log in' }).waitFor();
      // The first Tab reaches the skip link, which moves the focus to the page without leaving it.
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
      assert.match(page.url(), /\/dashboard\/$/);
      await page.getByLabel('User name').focus();
      await page.keyboard.type('demo-sa');
      await page.keyboard.press('Tab');
      await page.keyboard.type('wrong');
      await shot(page, 'login');
      await page.keyboard.press('Enter');
      const err = page.locator('#login-error');
      await err.filter({ hasText: /\w/ }).waitFor();
      assert.match(await err.innerText(), /[a-z]{3,}/i);
      assert.doesNotMatch(await err.innerText(), /^\s*\d+\s*$/);
      await page.close();
    });

    void test('a personal account sees the service-account notice and the server refusal in words', async () => {
      const page = await login('magnetar-demo');
      await page.goto(`${m.url}/dashboard/#/create`);
      await page.locator('#sa-notice').waitFor();
      await page.getByLabel('Cluster name').fill('mine');
      await page.getByLabel('Cluster template').selectOption({ index: 1 });
      await page.getByLabel('New key pair name').fill('kp-demo');
      await page.getByRole('button', { name: 'Create key pair' }).click();
      await page.locator('#keypair option[value="kp-demo"]').waitFor({ state: 'attached' });
      await page.getByRole('button', { name: 'Create cluster' }).click();
      // The form's own rules pass: this refusal can only come from the server (403).
      const err = page.locator('#create-error');
      await err.filter({ hasText: /service account/i }).waitFor();
      assert.doesNotMatch(await err.innerText(), /\b403\b/);
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('heading', { name: 'Log in' }).waitFor();
      assert.equal(await page.getByRole('status').innerText(), 'You have logged out.');
      assert.equal(await page.evaluate(() => sessionStorage.getItem('magnetar.session')), null);
      await page.close();
    });

    void test('a service account runs a whole cluster life in the browser and the cloud is empty again', async (t) => {
      const page = await login('magnetar-demo-sa');
      const project = auth['magnetar-demo-sa']!.project_name;
      const status = page.locator('#cluster-status');
      const ngRow = (name: string) => page.locator(`#ng-table tr[data-ng="${name}"]`);
      let uuid = '';

      await t.test('the templates page lists the operator templates', async () => {
        await page.getByRole('link', { name: 'Templates' }).click();
        await page.getByRole('heading', { name: 'Cluster templates' }).waitFor();
        assert.deepEqual(
          (await rows(page, 'table')).map((r) => r.Name),
          ['k8s-v1.31', 'k8s-v1.32', 'k8s-v1.33'],
        );
        await shot(page, 'templates');
      });

      let posts = 0;
      page.on('request', (r) => {
        if (r.method() === 'POST' && new URL(r.url()).pathname === '/v1/clusters') posts++;
      });

      await t.test(
        'the create form refuses an even master count and 11 nodes before asking the server',
        async () => {
          await page.getByRole('link', { name: 'Create cluster' }).click();
          await page.getByLabel('Cluster name').fill('web1');
          await page.getByLabel('Masters (odd)').fill('2');
          await page.getByLabel(/Worker nodes/).fill('11');
          await page.getByRole('button', { name: 'Create cluster' }).click();
          assert.match(await page.locator('#master_count-error').innerText(), /odd/);
          assert.match(await page.locator('#node_count-error').innerText(), /At most 10/);
          assert.match(await page.locator('#cluster_template_id-error').innerText(), /template/);
          assert.equal(await page.getByLabel('Masters (odd)').getAttribute('aria-invalid'), 'true');
          assert.equal(posts, 0);
          await shot(page, 'create-validation');
        },
      );

      await t.test(
        'corrected, a double click on Create sends one request and opens the new cluster',
        async () => {
          await page.getByLabel('Masters (odd)').fill('1');
          await page.getByLabel(/Worker nodes/).fill('1');
          await page.getByLabel('Cluster template').selectOption({ label: 'k8s-v1.31 (v1.31.9)' });
          await page.getByLabel('New key pair name').fill('kp1');
          await page.getByRole('button', { name: 'Create key pair' }).click();
          await page.locator('#keypair option[value="kp1"]').waitFor({ state: 'attached' });
          await shot(page, 'create');
          await page.getByRole('button', { name: 'Create cluster' }).dblclick();
          await page.getByRole('heading', { name: 'Cluster web1' }).waitFor();
          uuid = /#\/cluster\/([0-9a-f-]+)$/.exec(page.url())![1]!;
          assert.equal(posts, 1);
          const listed = (await (
            await fetch(`${m.url}/v1/clusters`, { headers: { 'x-auth-token': await token(page) } })
          ).json()) as { clusters: unknown[] };
          assert.equal(listed.clusters.length, 1);
        },
      );

      await t.test('the cluster list shows the cluster in progress', async () => {
        await page.getByRole('link', { name: 'Clusters', exact: true }).click();
        const row = page.locator('#cluster-list tbody tr', { hasText: 'web1' });
        await row.waitFor();
        assert.match(await row.innerText(), /CREATE_(IN_PROGRESS|COMPLETE)/);
        await shot(page, 'clusters');
        await row.getByRole('link', { name: 'web1' }).click();
        await page.getByRole('heading', { name: 'Cluster web1' }).waitFor();
      });

      await t.test('the page follows the cluster to CREATE_COMPLETE without a reload', async () => {
        await page.evaluate(() => Object.assign(window, { notReloaded: true }));
        await status.filter({ hasText: 'CREATE_COMPLETE' }).waitFor();
        assert.equal(await page.evaluate(() => 'notReloaded' in window), true);
        const timeline = await page.locator('#timeline').innerText();
        assert.match(timeline, /CREATE_IN_PROGRESS[\s\S]*CREATE_COMPLETE/);
        assert.match(timeline, /ControlPlaneAvailable: yes/);
        // One master and one worker, each placed in an availability zone.
        await page.locator('#machines tbody tr').nth(1).waitFor();
        const machines = await rows(page, '#machines table');
        assert.deepEqual(machines.map((r) => r['Node group']).sort(), ['default-master', 'default-worker']);
        for (const r of machines) {
          assert.equal(r.State, 'ACTIVE');
          assert.match(r['Availability zone']!, /^AZ-\d$/);
        }
        await shot(page, 'cluster');
      });

      await t.test('the upgrade form offers only the next minor version', async () => {
        const offered = await page.locator('#upgrade-template option').allInnerTexts();
        assert.deepEqual(offered, ['k8s-v1.32 (v1.32.5)']);
      });

      await t.test('a node group added in an availability zone appears with its machine', async () => {
        await page.getByLabel('Node group name').fill('extra');
        await page.getByLabel('Node group size').fill('1');
        await page.getByLabel('Availability zone (optional)').fill('AZ-2');
        await page.getByRole('button', { name: 'Add node group' }).click();
        await ngRow('extra').filter({ hasText: 'CREATE_COMPLETE' }).waitFor();
        const extra = page.locator('#machines tbody tr', { hasText: 'extra' });
        await extra.filter({ hasText: 'ACTIVE' }).waitFor();
        assert.match(await extra.innerText(), /AZ-2/);
        assert.equal(
          (await rows(page, '#ng-table table')).find((r) => r.Name === 'extra')?.['Availability zone'],
          'AZ-2',
        );
        await shot(page, 'node-groups');
      });

      await t.test('resizing the node group to 2 brings a second machine', async () => {
        await page.getByLabel('Node group', { exact: true }).selectOption('extra');
        await page.getByLabel('New size').fill('2');
        await page.getByRole('button', { name: 'Resize node group' }).click();
        await ngRow('extra').locator('td.count').filter({ hasText: /^2$/ }).waitFor();
        await ngRow('extra').filter({ hasText: 'UPDATE_COMPLETE' }).waitFor();
        await page.locator('#machines tbody tr', { hasText: 'extra' }).nth(1).waitFor();
        await status.filter({ hasText: /_COMPLETE/ }).waitFor();
      });

      await t.test('on a phone the cluster, list and create pages fit the screen width', async () => {
        const overflow = () =>
          page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        await page.setViewportSize(PHONE);
        assert.ok((await overflow()) <= 0, `the cluster page is ${await overflow()}px wider than a phone`);
        await page.evaluate(() => window.scrollTo(0, 0));
        await shot(page, 'phone', false);
        const here = page.url();
        await page.getByRole('link', { name: 'Clusters', exact: true }).click();
        await page.locator('#cluster-list').waitFor();
        assert.ok((await overflow()) <= 0, `the cluster list is ${await overflow()}px wider than a phone`);
        await page.getByRole('link', { name: 'Create cluster' }).click();
        await page.getByLabel('Cluster name').waitFor();
        assert.ok((await overflow()) <= 0, `the create form is ${await overflow()}px wider than a phone`);
        await page.setViewportSize(LAPTOP);
        await page.goto(here);
        await page.getByRole('heading', { name: 'Cluster web1' }).waitFor();
      });

      await t.test('the downloaded kubeconfig reaches the cluster API as its admin', async () => {
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: 'Download kubeconfig' }).click(),
        ]);
        assert.equal(download.suggestedFilename(), 'web1.kubeconfig');
        const kc = parse(readFileSync(await download.path(), 'utf8')) as Kubeconfig;
        const ctx = kc.contexts.find((c) => c.name === kc['current-context'])!.context;
        const cluster = kc.clusters.find((c) => c.name === ctx.cluster)!.cluster;
        const user = kc.users.find((u) => u.name === ctx.user)!.user;
        const headers = {
          'x-auth-token': await token(page),
          'openstack-api-version': 'container-infra latest',
        };
        const c = (await (await fetch(`${m.url}/v1/clusters/${uuid}`, { headers })).json()) as {
          api_address: string;
        };
        const caPem = (
          (await (await fetch(`${m.url}/v1/certificates/${uuid}`, { headers })).json()) as { pem: string }
        ).pem;
        const b64 = (s: string) => Buffer.from(s, 'base64').toString();
        assert.equal(ctx.cluster, 'web1');
        assert.equal(cluster.server, c.api_address);
        assert.equal(b64(cluster['certificate-authority-data']).trim(), caPem.trim());
        const cert = new X509Certificate(b64(user['client-certificate-data']));
        assert.ok(
          cert.verify(new X509Certificate(caPem).publicKey),
          'the client certificate is signed by the cluster CA',
        );
        assert.ok(cert.checkPrivateKey(createPrivateKey(b64(user['client-key-data']))));
        assert.match(cert.subject, /O=system:masters/);
        assert.equal(cert.publicKey.asymmetricKeyType, 'rsa');
        // The emulated workload API server accepts the credentials: 1 master + 1 + 2 workers.
        const nodes = await getJson(cluster.server, '/api/v1/nodes', {
          ca: caPem,
          cert: b64(user['client-certificate-data']),
          key: b64(user['client-key-data']),
        });
        assert.equal(nodes.status, 200);
        assert.equal((nodes.body as { items: unknown[] }).items.length, 4);
      });

      await t.test('delete needs the typed name, then the page says the cluster is gone', async () => {
        const confirm = page.getByLabel(/Type the cluster name/);
        await confirm.fill('web2');
        await page.getByRole('button', { name: 'Delete cluster' }).click();
        assert.match(await page.locator('#confirm-name-error').innerText(), /Type web1 exactly/);
        assert.equal(await confirm.getAttribute('aria-invalid'), 'true');
        await confirm.fill('web1');
        await page.getByRole('button', { name: 'Delete cluster' }).click();
        await page.getByRole('heading', { name: 'Cluster deleted' }).waitFor();
        await page.close();
      });

      await t.test(
        'the operator inventory shows nothing left in the project but its default security group',
        async () => {
          const admin = await login('magnetar-admin');
          await admin.getByRole('link', { name: 'Operator' }).click();
          await admin.locator('#inventory').waitFor();
          const services = await rows(admin, '#op-services + table');
          assert.ok(services.length > 0 && services.every((s) => s.State === 'up'), JSON.stringify(services));
          const left = await rows(admin, `section.inventory[data-project="${project}"] table`);
          assert.deepEqual(
            left.map((r) => r.Kind),
            ['Security groups', 'Security group rules'],
            JSON.stringify(left),
          );
          assert.equal(left[0]!.Names, 'default');
          await shot(admin, 'operator');
          await admin.close();
        },
      );
    });
  },
);

async function token(page: Page): Promise<string> {
  const s = await page.evaluate(() => sessionStorage.getItem('magnetar.session'));
  return (JSON.parse(s ?? '{}') as { token: string }).token;
}

/** GET over HTTPS with a client certificate. */
function getJson(
  base: string,
  path: string,
  tls: { ca: string; cert: string; key: string },
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolvePromise, reject) => {
    const req = request(new URL(path, base), { ...tls, headers: { accept: 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    });
    req.on('error', reject);
    req.end();
  });
}
