import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { systemClock, type Clock } from '../domain/index.ts';
import { CloudConfigError, loadCloudConfig, Session } from '../cloud/index.ts';
import type { CoeContext } from './coe-context.ts';
import { CommandFailedError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from './coe-errors.ts';
import { describeError } from './describe-error.ts';
import { addGlobalOptions, effectiveEnv } from './global-options.ts';
import { MagnumClient } from './magnum-client.ts';
import { registerBackupCommands } from './commands/backup.ts';
import { registerCaCommands } from './commands/ca.ts';
import { registerClusterCommands } from './commands/cluster.ts';
import { registerTemplateCommands } from './commands/cluster-template.ts';
import { registerNodeGroupCommands } from './commands/nodegroup.ts';
import { registerQuotaCommands } from './commands/quotas.ts';
import { registerManagementCommands } from './commands/management.ts';
import { registerServiceAndStatsCommands } from './commands/service-stats.ts';

/**
 * `coe`: Magnetar's command-line client. The same command tree, options, requests and
 * output as `openstack coe` (python-magnumclient), plus `--wait` on asynchronous commands,
 * and non-zero exit codes whenever something failed.
 */

/** Streams and surroundings of one run; all default to the process's. */
export interface CoeIo {
  stdout?: Writable;
  stderr?: Writable;
  env?: NodeJS.ProcessEnv;
  /** Directory relative paths are resolved against. @default process.cwd() */
  cwd?: string;
  /** Clock of `--wait` polling (tests pass a ManualClock). @default systemClock */
  clock?: Clock;
}

const HELP_AFTER = `
Connection: like the openstack client, from clouds.yaml (--os-cloud / OS_CLOUD) and OS_*
variables (OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME, ...); flags win.

Examples:
  coe cluster template list
  coe cluster create --cluster-template k8s-v1.30 --master-count 3 --master-flavor m1.medium \\
      --node-count 3 --flavor m1.medium --keypair my-keypair production-kubernetes --wait
  coe cluster config production-kubernetes --dir ~/.kube/production
  coe nodegroup create --node-count 5 --labels availability_zone=AZ-2 production-kubernetes worker-group2
  coe cluster resize --nodegroup worker-group2 production-kubernetes 7 --wait

Exit codes: 0 success, 1 failure (API error, failed or timed-out --wait; unlike the
openstack client this includes failed deletes and quota commands), 2 usage error.
`;

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: unknown;
    };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Build the command tree for one run. */
export function coeProgram(ctx: CoeContext): Command {
  const program = new Command('coe')
    .description('Kubernetes clusters on Magnetar or any Magnum API: the commands of `openstack coe`.')
    .version(`coe ${packageVersion()}`, '--version', 'print the version and exit')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
      // Usage errors are printed as one line by runCoe.
      outputError: () => undefined,
    })
    .showSuggestionAfterError()
    .option('--debug', 'print the stack of unexpected errors')
    .addHelpText('after', HELP_AFTER);
  addGlobalOptions(program);
  const cluster = registerClusterCommands(program, ctx);
  registerTemplateCommands(cluster, ctx);
  registerBackupCommands(cluster, ctx);
  registerNodeGroupCommands(program, ctx);
  registerCaCommands(program, ctx);
  registerQuotaCommands(program, ctx);
  registerServiceAndStatsCommands(program, ctx);
  registerManagementCommands(program, ctx);
  return program;
}

/** The command named by the leading words of `args` (`cluster template list`), for error hints. */
function commandPath(program: Command, args: readonly string[]): string {
  let cmd = program;
  const path = [program.name()];
  for (const a of args) {
    if (a.startsWith('-')) continue;
    const sub = cmd.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!sub) break;
    cmd = sub;
    path.push(sub.name());
  }
  return path.join(' ');
}

function usageLine(err: CommanderError, where: string): string {
  const text = err.message
    .replace(/^error: /, '')
    .replace(/\n\(Did you mean (.*)\?\)/, ' (did you mean $1?)')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\.$/, '');
  return `coe: ${text}; see '${where} --help'\n`;
}

/**
 * Run `coe` with `argv` as in `process.argv` (node, script, arguments...) and return the
 * exit code: 0 success, 1 failure, 2 usage error. Never calls `process.exit`.
 */
export async function runCoe(argv: string[], io: CoeIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const env = io.env ?? process.env;
  const cwd = io.cwd ?? process.cwd();
  let session: Session | undefined;
  let client: MagnumClient | undefined;
  const ctx: CoeContext = {
    stdout,
    stderr,
    env,
    cwd,
    clock: io.clock ?? systemClock,
    async client() {
      if (client) return client;
      const opts = program.opts();
      const config = loadCloudConfig({
        env: effectiveEnv(env, opts),
        cwd,
        ...(env.HOME ? { home: env.HOME } : {}),
      });
      session = new Session(config, { userAgent: `magnetar-coe/${packageVersion()}` });
      client = new MagnumClient(session);
      return client;
    },
  };
  const program = coeProgram(ctx);
  const args = argv.slice(2);
  try {
    if (args.length === 0) {
      program.outputHelp({ error: true });
      return EXIT_USAGE;
    }
    await program.parseAsync(argv, { from: 'node' });
    return EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.help' ||
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version'
      ) {
        return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
      }
      stderr.write(usageLine(err, commandPath(program, args)));
      return EXIT_USAGE;
    }
    if (err instanceof UsageError) {
      stderr.write(`coe: ${err.message}; see '${commandPath(program, args)} --help'\n`);
      return EXIT_USAGE;
    }
    stderr.write(`coe: ${describeError(err)}\n`);
    const debug = program.opts<{ debug?: boolean }>().debug === true;
    if (
      debug &&
      err instanceof Error &&
      !(err instanceof CommandFailedError) &&
      !(err instanceof CloudConfigError)
    ) {
      stderr.write(`${err.stack ?? ''}\n`);
    }
    return EXIT_FAILURE;
  } finally {
    session?.close();
  }
}
