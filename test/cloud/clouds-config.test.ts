import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CloudConfigError,
  loadCloudConfig,
  Session,
  type LoadCloudConfigOptions,
} from '../../src/cloud/index.ts';

/** An isolated file system: cwd, home and system dir in a temp folder. */
function sandbox(t: { after: (fn: () => void) => void }) {
  const root = mkdtempSync(join(tmpdir(), 'clouds-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const cwd = join(root, 'cwd');
  const home = join(root, 'home');
  const systemDir = join(root, 'etc');
  for (const d of [cwd, join(home, '.config', 'openstack'), systemDir]) mkdirSync(d, { recursive: true });
  const write = (path: string, text: string) => {
    const full = join(root, path);
    writeFileSync(full, text);
    return full;
  };
  const load = (env: NodeJS.ProcessEnv, extra: Partial<LoadCloudConfigOptions> = {}) =>
    loadCloudConfig({ env, cwd, home, systemDir, ...extra });
  return { root, write, load };
}

const DEVSTACK = `
clouds:
  devstack:
    auth:
      auth_url: http://keystone.example:5000/v3
      username: demo
      password: secret
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: public
    identity_api_version: 3
  other:
    auth:
      auth_url: http://other.example/identity
      username: other
      password: x
`;

void test('OS_CLOUD selects an entry of ./clouds.yaml', (t) => {
  const { write, load } = sandbox(t);
  write('cwd/clouds.yaml', DEVSTACK);
  const c = load({ OS_CLOUD: 'devstack' });
  assert.equal(c.authType, 'password');
  assert.equal(c.auth.auth_url, 'http://keystone.example:5000/v3');
  assert.equal(c.auth.project_name, 'demo');
  assert.equal(c.regionName, 'RegionOne');
  assert.equal(c.interface, 'public');
  assert.equal(c.cloudName, 'devstack');
});

void test('the search order is OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack, then the system directory', (t) => {
  const { write, load } = sandbox(t);
  const entry = (url: string) => `clouds:\n  c:\n    auth: {auth_url: ${url}, username: u, password: p}\n`;
  write('etc/clouds.yaml', entry('http://etc'));
  assert.equal(load({ OS_CLOUD: 'c' }).auth.auth_url, 'http://etc');
  write('home/.config/openstack/clouds.yaml', entry('http://home'));
  assert.equal(load({ OS_CLOUD: 'c' }).auth.auth_url, 'http://home');
  write('cwd/clouds.yml', entry('http://cwd'));
  assert.equal(load({ OS_CLOUD: 'c' }).auth.auth_url, 'http://cwd');
  const explicit = write('explicit.yaml', entry('http://explicit'));
  assert.equal(load({ OS_CLOUD: 'c', OS_CLIENT_CONFIG_FILE: explicit }).auth.auth_url, 'http://explicit');
  assert.equal(load({}, { cloud: 'c', file: explicit }).auth.auth_url, 'http://explicit');
});

void test('secure.yaml is merged over clouds.yaml', (t) => {
  const { write, load } = sandbox(t);
  write(
    'cwd/clouds.yaml',
    'clouds:\n  c:\n    auth: {auth_url: http://k/v3, username: u, project_id: p1}\n    region_name: R1\n',
  );
  write('home/.config/openstack/secure.yaml', 'clouds:\n  c:\n    auth: {password: from-secure}\n');
  const c = load({ OS_CLOUD: 'c' });
  assert.equal(c.auth.password, 'from-secure');
  assert.equal(c.auth.username, 'u');
  assert.equal(c.regionName, 'R1');
});

void test('OS_* variables override the selected entry', (t) => {
  const { write, load } = sandbox(t);
  write('cwd/clouds.yaml', DEVSTACK);
  const c = load({
    OS_CLOUD: 'devstack',
    OS_REGION_NAME: 'RegionTwo',
    OS_PASSWORD: 'env-pass',
    OS_INTERFACE: 'internal',
    OS_INSECURE: 'true',
  });
  assert.equal(c.regionName, 'RegionTwo');
  assert.equal(c.auth.password, 'env-pass');
  assert.equal(c.interface, 'internal');
  assert.equal(c.verify, false);
});

void test('without OS_CLOUD the environment alone describes the cloud', (t) => {
  const { load } = sandbox(t);
  const c = load({
    OS_AUTH_URL: 'http://127.0.0.1:5000/v3',
    OS_USERNAME: 'demo',
    OS_PASSWORD: 'secret',
    OS_PROJECT_NAME: 'demo',
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_ID: 'default',
    OS_CACERT: 'certs/ca.pem',
  });
  assert.equal(c.authType, 'password');
  assert.equal(c.cloudName, 'envvars');
  assert.equal(c.auth.project_domain_id, 'default');
  assert.ok(
    c.cacert?.endsWith(join('cwd', 'certs', 'ca.pem')),
    'relative cacert resolved against the working directory',
  );
});

void test('application credential variables select v3applicationcredential', (t) => {
  const { load } = sandbox(t);
  const c = load({
    OS_AUTH_URL: 'http://k/v3',
    OS_APPLICATION_CREDENTIAL_ID: 'id1',
    OS_APPLICATION_CREDENTIAL_SECRET: 's',
  });
  assert.equal(c.authType, 'v3applicationcredential');
});

void test('OS_ENDPOINT with OS_TOKEN selects admin_token, as the openstack client does', (t) => {
  const { load } = sandbox(t);
  const c = load({ OS_ENDPOINT: 'http://127.0.0.1:9511/v1', OS_TOKEN: 'ADMIN' });
  assert.equal(c.authType, 'admin_token');
  assert.equal(c.endpointOverride, 'http://127.0.0.1:9511/v1');
  assert.equal(c.auth.token, 'ADMIN');
  assert.doesNotThrow(() => new Session(c).close());
});

void test('OS_AUTH_TYPE=none needs only an endpoint; v3token needs a token', (t) => {
  const { load } = sandbox(t);
  assert.equal(load({ OS_AUTH_TYPE: 'none', OS_ENDPOINT: 'http://x/v1' }).authType, 'none');
  assert.equal(
    load({ OS_AUTH_TYPE: 'v3token', OS_AUTH_URL: 'http://k/v3', OS_TOKEN: 't', OS_PROJECT_ID: 'p' }).authType,
    'v3token',
  );
});

void test('errors name every missing setting and where to give it', (t) => {
  const { load } = sandbox(t);
  assert.throws(
    () => load({ OS_AUTH_URL: 'http://k/v3', OS_USERNAME: 'demo' }),
    (err: unknown) =>
      err instanceof CloudConfigError &&
      /auth_type password needs auth\.password \(OS_PASSWORD\)/.test(err.message),
  );
  assert.throws(
    () => load({ OS_AUTH_TYPE: 'password', OS_AUTH_URL: 'http://k/v3' }),
    /auth\.username \(OS_USERNAME\) or auth\.user_id \(OS_USER_ID\), auth\.password \(OS_PASSWORD\)/,
  );
  assert.throws(
    () => load({ OS_AUTH_TYPE: 'admin_token', OS_TOKEN: 't', OS_AUTH_URL: 'http://k' }),
    /needs endpoint \(OS_ENDPOINT\)/,
  );
  assert.throws(
    () =>
      load({
        OS_AUTH_TYPE: 'v3applicationcredential',
        OS_AUTH_URL: 'http://k/v3',
        OS_APPLICATION_CREDENTIAL_NAME: 'n',
        OS_APPLICATION_CREDENTIAL_SECRET: 's',
      }),
    /auth\.username \(OS_USERNAME\) or auth\.user_id/,
  );
  assert.throws(
    () => load({ OS_AUTH_TYPE: 'saml2', OS_AUTH_URL: 'http://k' }),
    /auth_type "saml2" is not supported/,
  );
  assert.throws(
    () =>
      load({
        OS_AUTH_URL: 'http://k/v2.0',
        OS_USERNAME: 'u',
        OS_PASSWORD: 'p',
        OS_IDENTITY_API_VERSION: '2',
      }),
    /only Keystone v3/,
  );
  assert.throws(
    () => load({ OS_AUTH_URL: 'http://k', OS_USERNAME: 'u', OS_PASSWORD: 'p', OS_INTERFACE: 'private' }),
    /interface: expected public, internal or admin/,
  );
});

void test('an unknown cloud name lists the clouds the file defines', (t) => {
  const { write, load } = sandbox(t);
  const path = write('cwd/clouds.yaml', DEVSTACK);
  assert.throws(
    () => load({ OS_CLOUD: 'prod' }),
    (err: unknown) => {
      assert.ok(err instanceof CloudConfigError);
      assert.equal(err.message, `cloud "prod" was not found in ${path} (it defines: devstack, other)`);
      return true;
    },
  );
});

void test('nothing configured at all says how to configure a cloud', (t) => {
  const { load } = sandbox(t);
  assert.throws(
    () => load({}),
    /no cloud selected: set OS_CLOUD .* or OS_AUTH_URL with credentials, or OS_ENDPOINT with OS_TOKEN/,
  );
});

void test('a missing OS_CLIENT_CONFIG_FILE is an error rather than a silent fallback', (t) => {
  const { load } = sandbox(t);
  assert.throws(
    () => load({ OS_CLIENT_CONFIG_FILE: '/nonexistent/clouds.yaml', OS_CLOUD: 'x' }),
    /clouds.yaml file \/nonexistent\/clouds.yaml does not exist/,
  );
});

void test('clouds.yaml extras: verify, inline cacert, regions list, numeric values and endpoint overrides', (t) => {
  const { write, load } = sandbox(t);
  write(
    'cwd/clouds.yaml',
    `clouds:
  ibm:
    auth:
      auth_url: "https://keystone.example:5000"
      username: "user"
      password: 12345
      project_id: 07962130
      domain_name: "ibm"
      user_domain_name: "ibm"
    regions: [RegionA, RegionB]
    verify: false
    cacert: |
      -----BEGIN CERTIFICATE-----
      xxxx
      -----END CERTIFICATE-----
    container_infra_endpoint_override: http://magnum.example/v1
`,
  );
  const c = load({ OS_CLOUD: 'ibm', OS_COMPUTE_ENDPOINT_OVERRIDE: 'http://nova.example/v2.1' });
  assert.equal(c.auth.password, '12345');
  assert.equal(c.auth.project_id, '07962130', 'ids stay as written, leading zero included');
  assert.equal(c.regionName, 'RegionA');
  assert.equal(c.verify, false);
  assert.match(c.cacert ?? '', /^-----BEGIN CERTIFICATE-----/);
  assert.deepEqual(c.endpointOverrides, {
    'container-infra': 'http://magnum.example/v1',
    compute: 'http://nova.example/v2.1',
  });
});
