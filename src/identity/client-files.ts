import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import type { BootstrapCredential } from './bootstrap.ts';

/** Options of {@link writeClientFiles}. */
export interface ClientFilesOptions {
  /** Directory for `clouds.yaml` and the `<cloud>-openrc.sh` files. */
  dataDir: string;
  /** Identity URL clients authenticate against, e.g. `http://127.0.0.1:9511/identity/v3`. */
  authUrl: string;
  region: string;
  /** Credentials created now; on later starts, empty (the existing entries are refreshed). */
  credentials: BootstrapCredential[];
}

/** What was written. */
export interface ClientFiles {
  cloudsYaml: string;
  openrc: string[];
  /** Entries present in clouds.yaml. */
  clouds: string[];
}

/** The clouds.yaml entries Magnetar owns. */
export const BOOTSTRAP_CLOUDS = ['magnetar-admin', 'magnetar-demo', 'magnetar-demo-sa'];

const CloudEntrySchema = z.looseObject({
  auth: z.looseObject({
    username: z.string(),
    password: z.string(),
    project_name: z.string(),
    user_domain_name: z.string().default('Default'),
    project_domain_name: z.string().default('Default'),
  }),
});
const CloudsFileSchema = z.looseObject({ clouds: z.record(z.string(), z.unknown()).default({}) });

/** Write a file readable by its owner only, atomically. */
function writePrivate(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

function shellQuote(v: string): string {
  return `'${v.replace(/'/g, `'\\''`)}'`;
}

function readClouds(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  try {
    const parsed = CloudsFileSchema.safeParse(parseYaml(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data.clouds : {};
  } catch {
    return {};
  }
}

/**
 * Write `clouds.yaml` and one openrc file per Magnetar entry (mode 0600). Entries of other
 * clouds in an existing clouds.yaml are kept; Magnetar's own entries get the current auth
 * URL and region, with the passwords they already had unless new credentials are given.
 */
export function writeClientFiles(options: ClientFilesOptions): ClientFiles {
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const cloudsYaml = join(options.dataDir, 'clouds.yaml');
  const clouds = readClouds(cloudsYaml);
  const ours: BootstrapCredential[] = [];
  for (const c of options.credentials) ours.push(c);
  for (const [name, entry] of Object.entries(clouds)) {
    if (!BOOTSTRAP_CLOUDS.includes(name) || ours.some((c) => c.cloud === name)) continue;
    const e = CloudEntrySchema.safeParse(entry);
    if (!e.success) continue;
    ours.push({
      cloud: name,
      username: e.data.auth.username,
      password: e.data.auth.password,
      projectName: e.data.auth.project_name,
      userDomainName: e.data.auth.user_domain_name,
      projectDomainName: e.data.auth.project_domain_name,
    });
  }
  for (const c of ours) {
    clouds[c.cloud] = {
      auth: {
        auth_url: options.authUrl,
        username: c.username,
        password: c.password,
        project_name: c.projectName,
        user_domain_name: c.userDomainName,
        project_domain_name: c.projectDomainName,
      },
      region_name: options.region,
      interface: 'public',
      identity_api_version: 3,
    };
  }
  if (ours.length === 0) return { cloudsYaml, openrc: [], clouds: Object.keys(clouds) };
  writePrivate(
    cloudsYaml,
    `# Written by Magnetar. Use with: OS_CLIENT_CONFIG_FILE=<this file> OS_CLOUD=<entry> openstack ...\n${stringifyYaml({ clouds })}`,
  );
  const openrc: string[] = [];
  for (const c of ours) {
    const path = join(options.dataDir, `${c.cloud}-openrc.sh`);
    const lines = [
      `# Magnetar credentials (${c.cloud}). Use with: source ${c.cloud}-openrc.sh`,
      'unset OS_CLOUD OS_TOKEN OS_AUTH_TYPE',
      `export OS_AUTH_URL=${shellQuote(options.authUrl)}`,
      'export OS_IDENTITY_API_VERSION=3',
      `export OS_USERNAME=${shellQuote(c.username)}`,
      `export OS_PASSWORD=${shellQuote(c.password)}`,
      `export OS_PROJECT_NAME=${shellQuote(c.projectName)}`,
      `export OS_USER_DOMAIN_NAME=${shellQuote(c.userDomainName)}`,
      `export OS_PROJECT_DOMAIN_NAME=${shellQuote(c.projectDomainName)}`,
      `export OS_REGION_NAME=${shellQuote(options.region)}`,
      'export OS_INTERFACE=public',
      '',
    ];
    writePrivate(path, lines.join('\n'));
    openrc.push(path);
  }
  return { cloudsYaml, openrc, clouds: Object.keys(clouds) };
}

/** The text printed once on the first start. */
export function bootstrapBanner(
  credentials: BootstrapCredential[],
  files: ClientFiles,
  authUrl: string,
): string {
  const width = Math.max(...credentials.map((c) => c.username.length), 8);
  const rows = credentials.map(
    (c) =>
      `  ${c.username.padEnd(width)}  project ${c.projectName.padEnd(6)}  password ${c.password}   (cloud ${c.cloud})`,
  );
  const sa =
    credentials.find((c) => c.cloud === 'magnetar-demo-sa')?.cloud ??
    credentials[0]?.cloud ??
    'magnetar-admin';
  return [
    '',
    'Magnetar identity: first start. These passwords are shown only now:',
    ...rows,
    `Identity: ${authUrl}`,
    `Written (mode 0600): ${files.cloudsYaml} and ${files.openrc.length} openrc files.`,
    `Try: OS_CLIENT_CONFIG_FILE=${files.cloudsYaml} OS_CLOUD=${sa} openstack token issue`,
    '',
  ].join('\n');
}
