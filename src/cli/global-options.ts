import { Option, type Command } from 'commander';

/**
 * The `openstack` client's global connection options. Each one sets the `OS_*` environment
 * variable of the same name for this run, so `coe` reads `clouds.yaml`, `OS_CLOUD` and `OS_*`
 * exactly like `openstack`, with flags winning over the environment.
 */

interface GlobalOption {
  flag: string;
  /** commander's camelCase key. */
  key: string;
  env: string;
  help: string;
}

const opt = (name: string, env: string, help: string): GlobalOption => ({
  flag: `--os-${name} <${name}>`,
  key: `os${name
    .split('-')
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('')}`,
  env,
  help,
});

/** Connection options and the variables they set. */
export const GLOBAL_OPTIONS: readonly GlobalOption[] = [
  opt('cloud', 'OS_CLOUD', 'cloud name in clouds.yaml (env: OS_CLOUD)'),
  opt(
    'auth-type',
    'OS_AUTH_TYPE',
    'authentication type: password, v3password, token, v3token, admin_token, none, v3applicationcredential (env: OS_AUTH_TYPE)',
  ),
  opt('auth-url', 'OS_AUTH_URL', 'identity service URL (env: OS_AUTH_URL)'),
  opt('username', 'OS_USERNAME', 'user name (env: OS_USERNAME)'),
  opt('user-id', 'OS_USER_ID', 'user id (env: OS_USER_ID)'),
  opt('password', 'OS_PASSWORD', 'password (env: OS_PASSWORD)'),
  opt('project-name', 'OS_PROJECT_NAME', 'project name to scope to (env: OS_PROJECT_NAME)'),
  opt('project-id', 'OS_PROJECT_ID', 'project id to scope to (env: OS_PROJECT_ID)'),
  opt('user-domain-name', 'OS_USER_DOMAIN_NAME', "user's domain name (env: OS_USER_DOMAIN_NAME)"),
  opt('user-domain-id', 'OS_USER_DOMAIN_ID', "user's domain id (env: OS_USER_DOMAIN_ID)"),
  opt('project-domain-name', 'OS_PROJECT_DOMAIN_NAME', "project's domain name (env: OS_PROJECT_DOMAIN_NAME)"),
  opt('project-domain-id', 'OS_PROJECT_DOMAIN_ID', "project's domain id (env: OS_PROJECT_DOMAIN_ID)"),
  opt(
    'application-credential-id',
    'OS_APPLICATION_CREDENTIAL_ID',
    'application credential id (env: OS_APPLICATION_CREDENTIAL_ID)',
  ),
  opt(
    'application-credential-secret',
    'OS_APPLICATION_CREDENTIAL_SECRET',
    'application credential secret (env: OS_APPLICATION_CREDENTIAL_SECRET)',
  ),
  opt('token', 'OS_TOKEN', 'token, for token auth or with --os-endpoint (env: OS_TOKEN)'),
  opt(
    'endpoint',
    'OS_ENDPOINT',
    'Magnum API endpoint ending in /v1, skipping the catalog (env: OS_ENDPOINT)',
  ),
  opt('region-name', 'OS_REGION_NAME', 'region of the endpoint (env: OS_REGION_NAME)'),
  opt(
    'interface',
    'OS_INTERFACE',
    'endpoint interface: public, internal or admin (env: OS_INTERFACE, default public)',
  ),
  opt('cacert', 'OS_CACERT', 'CA bundle to verify TLS servers (env: OS_CACERT)'),
];

/** Add the connection options to the root command. */
export function addGlobalOptions(program: Command): Command {
  const group = 'Connection options (as in the openstack client):';
  for (const o of GLOBAL_OPTIONS) program.addOption(new Option(o.flag, o.help).helpGroup(group));
  program.addOption(
    new Option('--insecure', 'do not verify TLS certificates of the servers (env: OS_INSECURE)').helpGroup(
      group,
    ),
  );
  return program;
}

/** The environment as the cloud configuration should see it: `env` with the given flags applied. */
export function effectiveEnv(env: NodeJS.ProcessEnv, opts: Record<string, unknown>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const o of GLOBAL_OPTIONS) {
    const v = opts[o.key];
    if (typeof v === 'string') out[o.env] = v;
  }
  if (opts.insecure === true) out.OS_INSECURE = 'true';
  return out;
}
