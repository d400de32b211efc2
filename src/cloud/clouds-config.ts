import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/**
 * Cloud configuration the way the `openstack` client finds it: `clouds.yaml` (+ `secure.yaml`)
 * from the usual places, one entry chosen by `OS_CLOUD` or by name, then `OS_*` environment
 * variables laid over it.
 */

/** Interfaces an endpoint can be published on in the Keystone catalog. */
export type EndpointInterface = 'public' | 'internal' | 'admin';

/** A resolved cloud: how to authenticate and where to find the services. */
export interface CloudConfig {
  /**
   * Keystone auth plugin: `password`/`v3password`, `v3applicationcredential`,
   * `token`/`v3token`, `admin_token` (token + endpoint, no Keystone), `none`.
   */
  authType: string;
  /** The `auth:` section with clouds.yaml keys (`auth_url`, `username`, `project_id`, …). */
  auth: Record<string, string>;
  /** Catalog region; when absent, the first endpoint of any region is used. */
  regionName?: string;
  /** Catalog interface. @default public */
  interface?: EndpointInterface;
  /** CA bundle: a file path or inline PEM. */
  cacert?: string;
  /** Verify TLS certificates. @default true */
  verify?: boolean;
  /** Endpoint used instead of the catalog for every service (`OS_ENDPOINT`, `auth.endpoint`). */
  endpointOverride?: string;
  /** Per-service-type endpoints (`<service>_endpoint_override` in clouds.yaml). */
  endpointOverrides?: Record<string, string>;
  /** Client certificate for mutual TLS: a file path or inline PEM. */
  cert?: string;
  /** Client key for mutual TLS: a file path or inline PEM. */
  key?: string;
  /** The clouds.yaml entry this came from (`envvars` for the environment only). */
  cloudName?: string;
}

/** Raised when no usable cloud configuration can be built; the message names the setting. */
export class CloudConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CloudConfigError';
  }
}

/** Options of {@link loadCloudConfig}. */
export interface LoadCloudConfigOptions {
  /** Entry of clouds.yaml. @default process.env.OS_CLOUD */
  cloud?: string;
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Directory searched first for clouds.yaml/secure.yaml. @default process.cwd() */
  cwd?: string;
  /** Home directory (for ~/.config/openstack). @default os.homedir() */
  home?: string;
  /** A clouds.yaml path that must exist; searched before everything else. */
  file?: string;
  /** System-wide directory. @default /etc/openstack */
  systemDir?: string;
}

type AuthKind = 'password' | 'application-credential' | 'token' | 'admin-token' | 'none';

const AUTH_TYPES: Record<string, AuthKind> = {
  password: 'password',
  v3password: 'password',
  v3applicationcredential: 'application-credential',
  applicationcredential: 'application-credential',
  application_credential: 'application-credential',
  token: 'token',
  v3token: 'token',
  admin_token: 'admin-token',
  token_endpoint: 'admin-token',
  none: 'none',
};

/** How a Session authenticates for an `authType`; throws CloudConfigError for unknown types. */
export function authKindOf(authType: string): AuthKind {
  const kind = AUTH_TYPES[authType.toLowerCase()];
  if (!kind) {
    throw new CloudConfigError(
      `auth_type "${authType}" is not supported; use one of ${Object.keys(AUTH_TYPES).join(', ')}`,
    );
  }
  return kind;
}

const Scalar = z.union([z.string(), z.number(), z.boolean()]).transform((v) => String(v));
const CloudEntrySchema = z.looseObject({
  auth: z.record(z.string(), Scalar.or(z.null()).optional()).optional(),
  auth_type: Scalar.optional(),
  region_name: Scalar.optional(),
  regions: z.array(z.union([z.string(), z.looseObject({ name: z.string() })])).optional(),
  interface: Scalar.optional(),
  endpoint_type: Scalar.optional(),
  cacert: Scalar.optional(),
  cert: Scalar.optional(),
  key: Scalar.optional(),
  verify: z.union([z.boolean(), z.string()]).optional(),
  insecure: z.union([z.boolean(), z.string()]).optional(),
  identity_api_version: Scalar.optional(),
  endpoint: Scalar.optional(),
});
const CloudsFileSchema = z.looseObject({ clouds: z.record(z.string(), z.unknown()).optional() });

type Json = Record<string, unknown>;

/** Environment variables that land in `auth:`. */
const AUTH_ENV: [string, string][] = [
  ['OS_AUTH_URL', 'auth_url'],
  ['OS_USERNAME', 'username'],
  ['OS_USER_ID', 'user_id'],
  ['OS_PASSWORD', 'password'],
  ['OS_TENANT_NAME', 'project_name'],
  ['OS_PROJECT_NAME', 'project_name'],
  ['OS_TENANT_ID', 'project_id'],
  ['OS_PROJECT_ID', 'project_id'],
  ['OS_USER_DOMAIN_NAME', 'user_domain_name'],
  ['OS_USER_DOMAIN_ID', 'user_domain_id'],
  ['OS_PROJECT_DOMAIN_NAME', 'project_domain_name'],
  ['OS_PROJECT_DOMAIN_ID', 'project_domain_id'],
  ['OS_DOMAIN_NAME', 'domain_name'],
  ['OS_DOMAIN_ID', 'domain_id'],
  ['OS_DEFAULT_DOMAIN', 'default_domain_id'],
  ['OS_SYSTEM_SCOPE', 'system_scope'],
  ['OS_APPLICATION_CREDENTIAL_ID', 'application_credential_id'],
  ['OS_APPLICATION_CREDENTIAL_NAME', 'application_credential_name'],
  ['OS_APPLICATION_CREDENTIAL_SECRET', 'application_credential_secret'],
  ['OS_TOKEN', 'token'],
];

/** Environment variables that land at the top of the cloud entry. */
const TOP_ENV: [string, string][] = [
  ['OS_AUTH_TYPE', 'auth_type'],
  ['OS_REGION_NAME', 'region_name'],
  ['OS_ENDPOINT_TYPE', 'interface'],
  ['OS_INTERFACE', 'interface'],
  ['OS_CACERT', 'cacert'],
  ['OS_CERT', 'cert'],
  ['OS_KEY', 'key'],
  ['OS_INSECURE', 'insecure'],
  ['OS_IDENTITY_API_VERSION', 'identity_api_version'],
  ['OS_URL', 'endpoint'],
  ['OS_ENDPOINT', 'endpoint'],
];

/** Where a setting can be given, for error messages. */
const ENV_OF: Record<string, string> = Object.fromEntries([
  ...AUTH_ENV.map(([e, k]): [string, string] => [`auth.${k}`, e]),
  ...TOP_ENV.map(([e, k]): [string, string] => [k, e]),
]);

function present(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

function readYaml(path: string): Json {
  let parsed: unknown;
  try {
    // Failsafe schema: every scalar stays the string the user wrote, so ids like 0123 and
    // passwords like "yes" or 1e3 arrive verbatim.
    parsed = parseYaml(readFileSync(path, 'utf8'), { schema: 'failsafe' });
  } catch (err) {
    throw new CloudConfigError(`${path}: cannot read YAML: ${(err as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  const result = CloudsFileSchema.safeParse(parsed);
  if (!result.success) throw new CloudConfigError(`${path}: expected a mapping with a "clouds:" section`);
  return result.data;
}

function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    if (isRecord(b) && isRecord(v)) out[k] = deepMerge(b, v);
    else out[k] = v;
  }
  return out;
}

function isRecord(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function firstExisting(paths: string[]): string | undefined {
  return paths.find((p) => existsSync(p));
}

function bool(value: string | boolean, setting: string): boolean {
  if (typeof value === 'boolean') return value;
  const v = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
  throw new CloudConfigError(`${setting}: expected true or false, got "${value}"`);
}

function normaliseInterface(value: string): EndpointInterface {
  const v = value.toLowerCase().replace(/url$/, '');
  if (v === 'public' || v === 'internal' || v === 'admin') return v;
  throw new CloudConfigError(`interface: expected public, internal or admin, got "${value}"`);
}

/**
 * Find, merge and validate the cloud configuration like the `openstack` client does.
 * Search order for clouds.yaml: `options.file`, `OS_CLIENT_CONFIG_FILE`, `./clouds.yaml`,
 * `~/.config/openstack/clouds.yaml`, `/etc/openstack/clouds.yaml` (first found wins; `.yml`
 * accepted); `secure.yaml` (or `OS_CLIENT_SECURE_FILE`) is merged over it. The entry is
 * `options.cloud` or `OS_CLOUD`; without either, only the environment is used. `OS_*`
 * variables override the entry's values. Throws CloudConfigError naming what is missing.
 */
export function loadCloudConfig(options: LoadCloudConfigOptions = {}): CloudConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const home = options.home ?? homedir();
  const systemDir = options.systemDir ?? '/etc/openstack';
  const dirs = [cwd, join(home, '.config', 'openstack'), systemDir];

  const explicit = [options.file, present(env, 'OS_CLIENT_CONFIG_FILE')].filter((p): p is string => !!p);
  for (const p of explicit) {
    if (!existsSync(resolve(cwd, p))) throw new CloudConfigError(`clouds.yaml file ${p} does not exist`);
  }
  const cloudsPaths = [
    ...explicit.map((p) => resolve(cwd, p)),
    ...dirs.flatMap((d) => [join(d, 'clouds.yaml'), join(d, 'clouds.yml')]),
  ];
  const cloudsFile = firstExisting(cloudsPaths);
  const securePath = present(env, 'OS_CLIENT_SECURE_FILE');
  const secureFile = firstExisting([
    ...(securePath ? [resolve(cwd, securePath)] : []),
    ...dirs.flatMap((d) => [join(d, 'secure.yaml'), join(d, 'secure.yml')]),
  ]);

  let clouds: Json = {};
  if (cloudsFile) clouds = (readYaml(cloudsFile).clouds as Json | undefined) ?? {};
  if (secureFile) clouds = deepMerge(clouds, (readYaml(secureFile).clouds as Json | undefined) ?? {});

  const name = options.cloud ?? present(env, 'OS_CLOUD');
  let entry: Json = {};
  if (name !== undefined) {
    const found = clouds[name];
    if (!isRecord(found)) {
      const known = Object.keys(clouds);
      throw new CloudConfigError(
        cloudsFile
          ? `cloud "${name}" was not found in ${cloudsFile}${known.length ? ` (it defines: ${known.join(', ')})` : ''}`
          : `cloud "${name}" was not found: no clouds.yaml in ${cloudsPaths.join(', ')}`,
      );
    }
    entry = found;
  }
  const parsed = CloudEntrySchema.safeParse(entry);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new CloudConfigError(`cloud "${name ?? 'envvars'}": ${issues}`);
  }
  const raw = parsed.data;
  const auth: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw.auth ?? {}))
    if (v !== undefined && v !== null && v !== '') auth[k] = v;
  for (const [envName, key] of AUTH_ENV) {
    const v = present(env, envName);
    if (v !== undefined) auth[key] = v;
  }
  const top: Record<string, string | boolean | undefined> = {
    auth_type: raw.auth_type,
    region_name: raw.region_name ?? regionOf(raw.regions?.[0]),
    interface: raw.interface ?? raw.endpoint_type,
    cacert: raw.cacert,
    cert: raw.cert,
    key: raw.key,
    verify: raw.verify,
    insecure: raw.insecure,
    identity_api_version: raw.identity_api_version,
    endpoint: raw.endpoint,
  };
  for (const [envName, key] of TOP_ENV) {
    const v = present(env, envName);
    if (v !== undefined) top[key] = v;
  }

  const endpointOverrides: Record<string, string> = {};
  for (const [k, v] of Object.entries(entry)) {
    const m = /^(.+)_endpoint_override$/.exec(k);
    if (m && (typeof v === 'string' || typeof v === 'number'))
      endpointOverrides[m[1]!.replace(/_/g, '-')] = String(v);
  }
  for (const [k, v] of Object.entries(env)) {
    const m = /^OS_(.+)_ENDPOINT_OVERRIDE$/.exec(k);
    if (m && v) endpointOverrides[m[1]!.toLowerCase().replace(/_/g, '-')] = v;
  }

  const config: CloudConfig = { authType: '', auth };
  config.cloudName = name ?? 'envvars';
  const endpoint = auth.endpoint ?? (typeof top.endpoint === 'string' ? top.endpoint : undefined);
  if (endpoint) config.endpointOverride = endpoint;
  if (Object.keys(endpointOverrides).length > 0) config.endpointOverrides = endpointOverrides;
  if (typeof top.region_name === 'string' && top.region_name) config.regionName = top.region_name;
  if (typeof top.interface === 'string' && top.interface)
    config.interface = normaliseInterface(top.interface);
  if (typeof top.cacert === 'string' && top.cacert) config.cacert = pathOrPem(top.cacert, cwd);
  if (typeof top.cert === 'string' && top.cert) config.cert = pathOrPem(top.cert, cwd);
  if (typeof top.key === 'string' && top.key) config.key = pathOrPem(top.key, cwd);
  if (top.verify !== undefined) config.verify = bool(top.verify, 'verify');
  if (top.insecure !== undefined && bool(top.insecure, 'insecure (OS_INSECURE)')) config.verify = false;

  const apiVersion = typeof top.identity_api_version === 'string' ? top.identity_api_version : undefined;
  if (apiVersion !== undefined && !/^3(\.\d+)?$/.test(apiVersion)) {
    throw new CloudConfigError(
      `identity_api_version (OS_IDENTITY_API_VERSION) is "${apiVersion}": only Keystone v3 is supported`,
    );
  }
  config.authType =
    typeof top.auth_type === 'string' && top.auth_type ? top.auth_type.toLowerCase() : inferAuthType(config);
  if (name === undefined && !auth.auth_url && !config.endpointOverride) {
    const known = Object.keys(clouds);
    throw new CloudConfigError(
      'no cloud selected: set OS_CLOUD to an entry of clouds.yaml' +
        (cloudsFile
          ? ` (${cloudsFile} defines: ${known.join(', ') || 'nothing'})`
          : ` (none found in ${cloudsPaths.join(', ')})`) +
        ', or OS_AUTH_URL with credentials, or OS_ENDPOINT with OS_TOKEN',
    );
  }
  validateCloudConfig(config);
  return config;
}

function regionOf(r: string | { name: string } | undefined): string | undefined {
  return typeof r === 'string' ? r : r?.name;
}

function pathOrPem(value: string, cwd: string): string {
  if (value.includes('-----BEGIN')) return value;
  return isAbsolute(value) ? value : resolve(cwd, value);
}

function inferAuthType(config: CloudConfig): string {
  const a = config.auth;
  if (a.token && config.endpointOverride && !a.auth_url) return 'admin_token';
  if (a.application_credential_secret) return 'v3applicationcredential';
  if (a.token && !a.password) return 'v3token';
  return 'password';
}

/**
 * Check that a configuration has everything its auth type needs. Throws CloudConfigError
 * naming each missing setting and where it can be given.
 */
export function validateCloudConfig(config: CloudConfig): void {
  const kind = authKindOf(config.authType);
  const a = config.auth;
  const missing: string[] = [];
  const need = (key: string) => {
    if (!a[key]) missing.push(describe(`auth.${key}`));
  };
  const needOne = (keys: string[]) => {
    if (!keys.some((k) => a[k])) missing.push(keys.map((k) => describe(`auth.${k}`)).join(' or '));
  };
  switch (kind) {
    case 'password':
      need('auth_url');
      needOne(['username', 'user_id']);
      need('password');
      break;
    case 'application-credential':
      need('auth_url');
      need('application_credential_secret');
      if (!a.application_credential_id) {
        if (!a.application_credential_name)
          needOne(['application_credential_id', 'application_credential_name']);
        else needOne(['username', 'user_id']);
      }
      break;
    case 'token':
      need('auth_url');
      need('token');
      break;
    case 'admin-token':
      need('token');
      if (!config.endpointOverride) missing.push(describe('endpoint'));
      break;
    case 'none':
      if (!config.endpointOverride) missing.push(describe('endpoint'));
      break;
  }
  if (missing.length > 0) {
    const cloud = config.cloudName ? `cloud "${config.cloudName}": ` : '';
    throw new CloudConfigError(`${cloud}auth_type ${config.authType} needs ${missing.join(', ')}`);
  }
}

function describe(setting: string): string {
  const env = ENV_OF[setting] ?? (setting === 'auth.endpoint' ? 'OS_ENDPOINT' : undefined);
  return env ? `${setting} (${env})` : setting;
}
