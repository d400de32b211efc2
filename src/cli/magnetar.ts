import { Command } from 'commander';
import { startMagnetar } from '../main.ts';
import { ConfigError, loadConfig } from './load-config.ts';

/** The `magnetar` server command. */
export function magnetarProgram(): Command {
  const program = new Command('magnetar').description(
    'Magnetar: Kubernetes clusters as a service for OpenStack',
  );
  program
    .command('serve', { isDefault: true })
    .description('run the API, identity, dashboard, controllers and (by default) the embedded cloud')
    .option('-c, --config <file>', 'YAML configuration file (also MAGNETAR_CONFIG)')
    .option('--host <host>', 'listen address')
    .option('--port <port>', 'listen port', (v) => Number(v))
    .option('--data-dir <dir>', 'data directory')
    .option('--role <role>', 'all | api | controllers')
    .option('--store-url <url>', 'SQLite file or postgres:// URL')
    .action(
      async (opts: {
        config?: string;
        host?: string;
        port?: number;
        dataDir?: string;
        role?: string;
        storeUrl?: string;
      }) => {
        let config;
        try {
          config = loadConfig({
            ...(opts.config ? { file: opts.config } : {}),
            overrides: {
              host: opts.host,
              port: opts.port,
              dataDir: opts.dataDir,
              role: opts.role,
              'store.url': opts.storeUrl,
              ...(opts.storeUrl?.startsWith('postgres') ? { 'store.engine': 'postgres' } : {}),
            },
          });
        } catch (err) {
          if (err instanceof ConfigError) {
            process.stderr.write(`magnetar: ${err.message}\n`);
            process.exit(2);
          }
          throw err;
        }
        const m = await startMagnetar({ config, printBootstrap: true });
        process.stdout.write(
          `Magnetar is listening on ${m.url} (Magnum API ${m.url}/v1, identity ${m.url}/identity/v3)\n`,
        );
        const stop = () => {
          void m.close().then(() => process.exit(0));
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      },
    );
  return program;
}
