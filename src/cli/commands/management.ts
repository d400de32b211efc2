import type { Command } from 'commander';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { z } from 'zod';
import { loadCloudConfig, Session } from '../../cloud/index.ts';
import type { CoeContext } from '../coe-context.ts';
import { CommandFailedError } from '../coe-errors.ts';
import { effectiveEnv } from '../global-options.ts';

/**
 * `coe management config` writes a kubeconfig for Magnetar's management API (the Cluster API
 * objects under `/k8s`), fetched from the server (`GET /k8s/management/kubeconfig`), whose user
 * runs `coe management token`: an exec credential plugin that prints a token from the same
 * clouds.yaml settings, cached until shortly before it expires. The kubeconfig holds no secret.
 */

/** The `ExecCredential` kubectl reads from an exec plugin. */
export interface ExecCredential {
  apiVersion: 'client.authentication.k8s.io/v1';
  kind: 'ExecCredential';
  status: { token: string; expirationTimestamp?: string };
}

/** Variables passed on to the plugin so it authenticates like the `config` run. */
const FORWARDED = [
  'OS_CLOUD',
  'OS_CLIENT_CONFIG_FILE',
  'OS_AUTH_URL',
  'OS_USERNAME',
  'OS_PROJECT_NAME',
  'OS_PROJECT_ID',
  'OS_USER_DOMAIN_NAME',
  'OS_PROJECT_DOMAIN_NAME',
  'OS_REGION_NAME',
];

/** Renew a cached token this long before it expires. */
const MARGIN_MS = 5 * 60_000;

function rootOpts(cmd: Command): Record<string, unknown> {
  let c: Command = cmd;
  while (c.parent) c = c.parent;
  return c.opts();
}

function sessionFor(ctx: CoeContext, cmd: Command): { session: Session; env: NodeJS.ProcessEnv } {
  const env = effectiveEnv(ctx.env, rootOpts(cmd));
  const config = loadCloudConfig({ env, cwd: ctx.cwd, ...(env.HOME ? { home: env.HOME } : {}) });
  return { session: new Session(config, { userAgent: 'magnetar-coe' }), env };
}

/** Base URL of the server: the Magnum endpoint without its `/v1`. */
async function serverBase(session: Session): Promise<string> {
  const magnum = await session.endpoint('container-infra');
  return magnum.replace(/\/v1\/?$/, '');
}

const TokenInfo = z.object({ token: z.object({ expires_at: z.string() }) });
const Cached = z.object({ token: z.string(), expiresAt: z.string() });

function cacheFile(env: NodeJS.ProcessEnv, session: Session): string {
  const base = env.XDG_CACHE_HOME ?? join(env.HOME ?? '.', '.cache');
  const key = createHash('sha256')
    .update(
      JSON.stringify({ auth: session.config.auth, type: session.config.authType, cloud: env.OS_CLOUD ?? '' }),
    )
    .digest('hex')
    .slice(0, 24);
  return join(base, 'magnetar', `management-token-${key}.json`);
}

/** A fresh or cached token with its expiry. */
export async function managementToken(
  session: Session,
  env: NodeJS.ProcessEnv,
  nowMs: number,
): Promise<{ token: string; expiresAt: string }> {
  const file = cacheFile(env, session);
  if (existsSync(file)) {
    try {
      const c = Cached.parse(JSON.parse(readFileSync(file, 'utf8')));
      if (Date.parse(c.expiresAt) - nowMs > MARGIN_MS) return c;
    } catch {
      // A damaged cache is replaced below.
    }
  }
  const token = await session.token();
  if (!token) throw new CommandFailedError('the configured cloud gives no token (auth type none)');
  const res = await session.request<unknown>('identity', 'GET', '/auth/tokens', {
    headers: { 'X-Subject-Token': token },
  });
  const info = TokenInfo.safeParse(res.body);
  if (!info.success)
    throw new CommandFailedError('unexpected answer from the identity service when reading the token');
  const fresh = { token, expiresAt: info.data.token.expires_at };
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, JSON.stringify(fresh), { mode: 0o600 });
  return fresh;
}

const KubeconfigShape = z.looseObject({
  users: z.array(
    z.looseObject({ name: z.string(), user: z.looseObject({ exec: z.looseObject({}).optional() }) }),
  ),
});

interface ConfigOptions {
  dir: string;
  force?: boolean;
  execCommand: string;
}

export function registerManagementCommands(program: Command, ctx: CoeContext): Command {
  const mgmt = program
    .command('management')
    .description('kubectl access to the Cluster API objects of your clusters (the management API)');

  mgmt
    .command('config')
    .description('write a kubeconfig for the management API and print the line that selects it')
    .option('--dir <dir>', 'directory for the config file (created if missing)', '.')
    .option('--force', 'overwrite an existing config file')
    .option('--exec-command <command>', 'command kubectl runs to get a token', 'coe')
    .addHelpText(
      'after',
      '\nExample:\n  eval "$(coe management config --dir ~/.kube/magnetar)"\n  kubectl get clusters,machines\n',
    )
    .action(async (o: ConfigOptions, cmd: Command) => {
      const path = join(resolve(ctx.cwd, o.dir), 'config');
      if (!o.force && existsSync(path)) throw new CommandFailedError(`File ${path} exists, aborting.`);
      const { session, env } = sessionFor(ctx, cmd);
      try {
        const base = await serverBase(session);
        const token = await session.token();
        const res = await fetch(`${base}/k8s/management/kubeconfig`, { headers: { 'x-auth-token': token } });
        const text = await res.text();
        if (res.status !== 200)
          throw new CommandFailedError(`the management API answered ${res.status}: ${text.slice(0, 300)}`);
        const doc = KubeconfigShape.safeParse(parseYaml(text));
        if (!doc.success)
          throw new CommandFailedError('the management API returned an unexpected kubeconfig');
        const forwarded = FORWARDED.flatMap((k) => {
          const v = env[k];
          if (!v) return [];
          return [{ name: k, value: k === 'OS_CLIENT_CONFIG_FILE' ? resolve(ctx.cwd, v) : v }];
        });
        for (const u of doc.data.users) {
          if (!u.user.exec) continue;
          u.user.exec = {
            ...u.user.exec,
            command: o.execCommand,
            args: ['management', 'token'],
            ...(forwarded.length > 0 ? { env: forwarded } : {}),
          };
        }
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, stringify(doc.data, { lineWidth: 0 }), { mode: 0o600 });
        await chmod(path, 0o600);
        const csh = (ctx.env.SHELL ?? '').includes('csh');
        ctx.stdout.write(csh ? `setenv KUBECONFIG ${path}\n` : `export KUBECONFIG=${path}\n`);
      } finally {
        session.close();
      }
    });

  mgmt
    .command('token')
    .description(
      'print an ExecCredential with a token for kubectl (used by the kubeconfig of `management config`)',
    )
    .action(async (_o: unknown, cmd: Command) => {
      const { session, env } = sessionFor(ctx, cmd);
      try {
        const t = await managementToken(session, env, ctx.clock.now());
        const cred: ExecCredential = {
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          status: {
            token: t.token,
            expirationTimestamp: new Date(Date.parse(t.expiresAt)).toISOString().replace(/\.\d{3}Z$/, 'Z'),
          },
        };
        ctx.stdout.write(`${JSON.stringify(cred)}\n`);
      } finally {
        session.close();
      }
    });
  return mgmt;
}
