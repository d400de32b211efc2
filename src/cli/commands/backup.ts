import type { Command } from 'commander';
import { z } from 'zod';
import type { CoeContext } from '../coe-context.ts';
import { CommandFailedError } from '../coe-errors.ts';
import { isNotFoundError } from '../describe-error.ts';
import type { MagnumClient } from '../magnum-client.ts';
import { addOutputOptions, emitList, emitShow, type OutputOptions } from '../output.ts';
import { addWaitOptions, waitFor, type WaitOptions, type WaitTarget } from '../wait.ts';
import { field, forEachName } from './common.ts';

/**
 * `coe cluster backup create|list|show|delete|restore`: etcd backups, a Magnetar extension of
 * the Magnum API (`/v1/clusters/{cluster}/backups`, `/v1/backups`).
 */

/** Fields `cluster backup show` prints. */
export const BACKUP_FIELDS = [
  'uuid',
  'name',
  'cluster_uuid',
  'cluster_name',
  'trigger',
  'status',
  'status_reason',
  'etcd_revision',
  'total_keys',
  'hash',
  'size',
  'emulated',
  'stored_bytes',
  'checksum',
  'encryption',
  'key_id',
  'container',
  'object',
  'delete_with_cluster',
  'created_at',
  'completed_at',
  'verified_at',
  'restore_status',
  'restore_status_reason',
  'restored_at',
] as const;

/** Columns of `cluster backup list`. */
export const BACKUP_LIST_COLUMNS = [
  'uuid',
  'name',
  'cluster_name',
  'trigger',
  'status',
  'etcd_revision',
  'total_keys',
  'size',
  'created_at',
];

const BackupWire = z.looseObject({
  uuid: z.string(),
  name: z.string(),
  status: z.string(),
  status_reason: z.string().nullish(),
  restore_status: z.string().nullish(),
  restore_status_reason: z.string().nullish(),
});
type Backup = z.infer<typeof BackupWire>;
const BackupList = z.looseObject({ backups: z.array(BackupWire) });

const seg = encodeURIComponent;

async function getBackup(client: MagnumClient, ident: string): Promise<Backup> {
  return BackupWire.parse(await client.extension('GET', `/backups/${seg(ident)}`));
}

/** Poll a backup until it is COMPLETE (or FAILED), in the `--wait` vocabulary. */
function backupTarget(client: MagnumClient, uuid: string, label: string): WaitTarget {
  return {
    label: `backup ${label}`,
    action: 'CREATE',
    async observe() {
      const b = await getBackup(client, uuid);
      const status = b.status === 'COMPLETE' || b.status === 'FAILED' ? `CREATE_${b.status}` : b.status;
      return { status, reason: b.status_reason ?? null };
    },
  };
}

/** Poll the restore of a backup. */
function restoreTarget(client: MagnumClient, uuid: string, label: string): WaitTarget {
  return {
    label: `restore from backup ${label}`,
    action: 'UPDATE',
    async observe() {
      const b = await getBackup(client, uuid);
      const status = (b.restore_status ?? 'RESTORE_IN_PROGRESS').replace(/^RESTORE_/, 'UPDATE_');
      return { status, reason: b.restore_status_reason ?? null };
    },
  };
}

function show(ctx: CoeContext, b: Record<string, unknown>, o: OutputOptions): void {
  emitShow(
    ctx.stdout,
    BACKUP_FIELDS,
    BACKUP_FIELDS.map((f) => field(b, f)),
    o,
  );
}

/** Register `backup` under `coe cluster`. */
export function registerBackupCommands(cluster: Command, ctx: CoeContext): Command {
  const backup = cluster
    .command('backup')
    .description('etcd backups of a cluster: encrypted snapshots in the object store, and restores');

  addWaitOptions(
    addOutputOptions(
      backup
        .command('create')
        .description('take an etcd snapshot of a cluster now')
        .argument('<cluster>', 'ID or name of the cluster'),
    ),
    'the backup is COMPLETE',
  ).action(async (ident: string, o: OutputOptions & WaitOptions) => {
    const client = await ctx.client();
    const b = BackupWire.parse(await client.extension('POST', `/clusters/${seg(ident)}/backups`));
    ctx.stderr.write(`Request to back up cluster ${ident} accepted: backup ${b.uuid}\n`);
    if (o.wait) await waitFor(ctx, backupTarget(client, b.uuid, b.name), o);
    show(ctx, o.wait ? await getBackup(client, b.uuid) : b, o);
  });

  addOutputOptions(
    backup
      .command('list')
      .description("list a cluster's backups, or every backup of the project (also of deleted clusters)")
      .argument('[cluster]', 'ID or name of the cluster'),
  ).action(async (ident: string | undefined, o: OutputOptions) => {
    const client = await ctx.client();
    const path = ident === undefined ? '/backups' : `/clusters/${seg(ident)}/backups`;
    const { backups } = BackupList.parse(await client.extension('GET', path));
    emitList(
      ctx.stdout,
      BACKUP_LIST_COLUMNS,
      backups.map((b) => BACKUP_LIST_COLUMNS.map((k) => field(b, k))),
      o,
    );
  });

  addOutputOptions(
    backup.command('show').description('show a backup').argument('<backup>', 'ID or name of the backup'),
  ).action(async (ident: string, o: OutputOptions) => {
    show(ctx, await getBackup(await ctx.client(), ident), o);
  });

  backup
    .command('delete')
    .description('delete backups and their stored snapshots')
    .argument('<backup...>', 'IDs or names of the backups')
    .action(async (idents: string[]) => {
      const client = await ctx.client();
      await forEachName(
        ctx,
        idents,
        async (b) => {
          await client.extension('DELETE', `/backups/${seg(b)}`);
          ctx.stdout.write(`Request to delete backup ${b} has been accepted.\n`);
        },
        (b, err) => `Delete for backup ${b} failed: ${err}`,
      );
    });

  addWaitOptions(
    backup
      .command('restore')
      .description(
        "restore a cluster's etcd state from a backup: a new control plane from the snapshot (everything is checked first)",
      )
      .argument('<cluster>', 'ID or name of the cluster to restore')
      .argument('<backup>', 'ID or name of the backup'),
    'the restore is complete',
  ).action(async (ident: string, backupIdent: string, o: WaitOptions) => {
    const client = await ctx.client();
    let b: Backup;
    try {
      b = await getBackup(client, backupIdent);
    } catch (err) {
      if (isNotFoundError(err)) throw new CommandFailedError(`Backup ${backupIdent} could not be found.`);
      throw err;
    }
    await client.extension('POST', `/clusters/${seg(ident)}/backups/${seg(b.uuid)}/actions/restore`);
    ctx.stdout.write(`Request to restore cluster ${ident} from backup ${b.name} has been accepted.\n`);
    if (o.wait) await waitFor(ctx, restoreTarget(client, b.uuid, b.name), o);
  });

  return backup;
}
