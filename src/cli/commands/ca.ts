import type { Command } from 'commander';
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CoeContext } from '../coe-context.ts';
import { CommandFailedError } from '../coe-errors.ts';
import { addWaitOptions, waitFor, type WaitOptions } from '../wait.ts';
import { clusterTarget } from './cluster.ts';

/** `coe ca show|sign|rotate` */
export function registerCaCommands(program: Command, ctx: CoeContext): void {
  const ca = program.command('ca').description("manage a cluster's certificate authority");

  ca.command('show')
    .description("print the cluster's CA certificate (PEM)")
    .argument('<cluster>', 'ID or name of the cluster')
    .action(async (ident: string) => {
      const client = await ctx.client();
      const c = await client.getCluster(ident);
      const pem = await client.getCa(c.uuid);
      if (pem !== null) ctx.stdout.write(`${pem.replace(/\n$/, '')}\n`);
    });

  ca.command('sign')
    .description("sign a certificate signing request with the cluster's CA and print the certificate")
    .argument('<cluster>', 'ID or name of the cluster')
    .argument('<csr>', 'file holding the PEM CSR')
    .action(async (ident: string, csrFile: string) => {
      const path = resolve(ctx.cwd, csrFile);
      const isFile = await stat(path).then(
        (s) => s.isFile(),
        () => false,
      );
      // The openstack client prints "A CSR must be provided." and exits 0; this is an error.
      if (!isFile) throw new CommandFailedError(`A CSR must be provided: ${csrFile} is not a readable file.`);
      const csr = await readFile(path, 'utf8');
      const client = await ctx.client();
      const c = await client.getCluster(ident);
      const pem = await client.signCsr(c.uuid, csr);
      if (pem !== null) ctx.stdout.write(`${pem.replace(/\n$/, '')}\n`);
    });

  addWaitOptions(
    ca
      .command('rotate')
      .description("replace the cluster's CA: certificates signed before stop working")
      .argument('<cluster>', 'ID or name of the cluster'),
    'the cluster has finished the rotation',
  ).action(async (ident: string, o: WaitOptions) => {
    const client = await ctx.client();
    const c = await client.getCluster(ident);
    await client.rotateCa(c.uuid);
    ctx.stdout.write(`Request to rotate the CA certificate for cluster ${c.uuid} has been accepted.\n`);
    if (o.wait) await waitFor(ctx, clusterTarget(client, c.uuid, 'UPDATE', ident), o);
  });
}
