import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CoeContext } from '../coe-context.ts';
import { CommandFailedError } from '../coe-errors.ts';
import { generateKeyAndCsr } from '../csr.ts';
import { certificateKubeconfig, insecureKubeconfig, keystoneKubeconfig } from '../kubeconfig.ts';

interface ConfigOptions {
  dir: string;
  force?: boolean;
  outputCerts?: boolean;
  useCertificate?: boolean;
  useKeystone?: boolean;
}

/** Write a file only the user can read (it may hold a private key). */
async function writePrivate(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o600 });
  await chmod(path, 0o600);
}

function refuseExisting(paths: readonly string[], force: boolean | undefined): void {
  if (force) return;
  for (const p of paths) if (existsSync(p)) throw new CommandFailedError(`File ${p} exists, aborting.`);
}

/**
 * `coe cluster config`: the `openstack` client's flow (GET cluster, GET template, then unless
 * TLS is disabled: a local key + CSR, GET CA, POST CSR), writing `<dir>/config`. Differences,
 * all in the user's favour: the directory is created when missing, existing files are refused
 * before any request is made, files are written mode 0600, and a cluster without an API address
 * yet is an error instead of a kubeconfig saying `server: None`.
 */
export function registerClusterConfigCommand(cluster: Command, ctx: CoeContext): void {
  cluster
    .command('config')
    .description('write a kubeconfig for a cluster and print the line that selects it')
    .argument('<cluster>', 'name or UUID of the cluster')
    .option('--dir <dir>', 'directory for the config and certificate files (created if missing)', '.')
    .option('--force', 'overwrite existing files')
    .option('--output-certs', 'also write key.pem, cert.pem and ca.pem')
    .option('--use-certificate', 'authenticate with a client certificate (the default)')
    .option('--use-keystone', 'authenticate with the OpenStack token in $OS_TOKEN instead of a certificate')
    .addHelpText(
      'after',
      '\nExample:\n  mkdir -p ~/.kube/prod && eval "$(coe cluster config production-kubernetes --dir ~/.kube/prod)"\n',
    )
    .action(async (ident: string, o: ConfigOptions) => {
      const dir = resolve(ctx.cwd, o.dir);
      const configPath = join(dir, 'config');
      const certPaths = ['key', 'cert', 'ca'].map((k) => join(dir, `${k}.pem`));
      const client = await ctx.client();
      const c = await client.getCluster(ident);
      const name = c.name ?? c.uuid;
      if (!c.cluster_template_id) throw new CommandFailedError(`cluster ${name} has no cluster template`);
      const t = await client.getTemplate(c.cluster_template_id);
      const coe = typeof t.coe === 'string' ? t.coe : 'kubernetes';
      const kubernetes = coe === 'kubernetes';
      const swarm = coe === 'swarm' || coe === 'swarm-mode';
      if (!kubernetes && !swarm)
        throw new CommandFailedError(`cluster ${name}: cannot configure a client for COE '${coe}'`);
      const tlsDisabled = t.tls_disabled === true;
      refuseExisting(
        [...(kubernetes ? [configPath] : []), ...(o.outputCerts && !tlsDisabled ? certPaths : [])],
        o.force,
      );
      if (!c.api_address) {
        const status = c.status ? ` (status ${c.status})` : '';
        throw new CommandFailedError(
          `cluster ${name} has no API address yet${status}; try again when it is CREATE_COMPLETE`,
        );
      }
      await mkdir(dir, { recursive: true });

      let tls: { key: string; csr: string; ca: string; cert: string } | undefined;
      if (!tlsDisabled) {
        const { key, csr } = await generateKeyAndCsr();
        const ca = await client.getCa(c.uuid);
        const cert = await client.signCsr(c.uuid, csr);
        if (ca === null || cert === null)
          throw new CommandFailedError(`cluster ${name}: the server returned no certificate`);
        tls = { key, csr, ca, cert };
        if (o.outputCerts) {
          await writePrivate(certPaths[0]!, key);
          await writePrivate(certPaths[1]!, cert);
          await writePrivate(certPaths[2]!, ca);
        }
      }

      const csh = (ctx.env.SHELL ?? '').includes('csh');
      const setenv = (k: string, v: string) => (csh ? `setenv ${k} ${v}` : `export ${k}=${v}`);
      if (swarm) {
        ctx.stdout.write(
          `${setenv('DOCKER_HOST', c.api_address)}\n${setenv('DOCKER_CERT_PATH', dir)}\n${setenv('DOCKER_TLS_VERIFY', tlsDisabled ? '' : 'True')}\n`,
        );
        return;
      }
      const server = c.api_address;
      const text = !tls
        ? insecureKubeconfig({ clusterName: name, server })
        : o.useKeystone
          ? keystoneKubeconfig({ clusterName: name, server, caPem: tls.ca })
          : certificateKubeconfig({
              clusterName: name,
              server,
              caPem: tls.ca,
              certPem: tls.cert,
              keyPem: tls.key,
            });
      await writePrivate(configPath, text);
      ctx.stdout.write(`${setenv('KUBECONFIG', configPath)}\n`);
    });
}
