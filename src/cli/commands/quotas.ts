import { Option, type Command } from 'commander';
import type { CoeContext } from '../coe-context.ts';
import { CommandFailedError } from '../coe-errors.ts';
import { describeError } from '../describe-error.ts';
import { addOutputOptions, emitList, emitObject, type CellStyle, type OutputOptions } from '../output.ts';
import { parseInteger } from '../arg-parsers.ts';
import { addListOptions, field, listQuery, type ListOptions } from './common.ts';

/** Quota and stats objects print as Property/Value with `-` for null, like the `openstack` client. */
export const PROPERTY_STYLE: CellStyle = { none: '-', showHeaders: ['Property', 'Value'] };
const LIST_STYLE: CellStyle = { none: '-', alignNumbers: false };
const LIST_COLUMNS = ['project_id', 'resource', 'hard_limit'];

interface QuotaOptions extends OutputOptions {
  projectId: string;
  resource: string;
  hardLimit: number;
}

function quotaIdentOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--project-id <project-id>', 'project ID')
    .requiredOption('--resource <resource>', 'resource name, e.g. Cluster');
}

function hardLimitOption(cmd: Command): Command {
  return cmd.addOption(
    new Option('--hard-limit <hard-limit>', 'maximum number of the resource')
      .argParser(parseInteger('--hard-limit', 0))
      .default(1),
  );
}

/** Run a quota call; failures keep the `openstack` client's wording but exit 1. */
async function quotaCall(what: (err: string) => string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    throw new CommandFailedError(what(describeError(err)));
  }
}

/** `coe quotas ...` (exit 1 on failure, unlike the openstack client) */
export function registerQuotaCommands(program: Command, ctx: CoeContext): void {
  const quotas = program
    .command('quotas')
    .description('manage per-project quotas (admin); failures exit 1, unlike the openstack client');

  addOutputOptions(
    hardLimitOption(quotaIdentOptions(quotas.command('create').description('create a quota'))),
  ).action(async (o: QuotaOptions) => {
    const client = await ctx.client();
    await quotaCall(
      (e) => `Create quota for project_id ${o.projectId} resource ${o.resource} failed: ${e}`,
      async () => {
        const q = await client.createQuota({
          project_id: o.projectId,
          resource: o.resource,
          hard_limit: o.hardLimit,
        });
        emitObject(ctx.stdout, q, o, PROPERTY_STYLE);
      },
    );
  });

  addOutputOptions(
    addListOptions(quotas.command('list').description('list quotas'), 'quotas')
      .option('--marker <marker>', 'the last quota id of the previous page')
      .option('--all-tenants', "list every project's quotas"),
  ).action(async (o: ListOptions & OutputOptions & { marker?: string; allTenants?: boolean }) => {
    const client = await ctx.client();
    const items = await client.listQuotas(listQuery(o), o.allTenants === true);
    const rows = items.map((q) => LIST_COLUMNS.map((k) => field(q, k)));
    if (rows.length === 0 && (o.format ?? 'table') === 'table') {
      // print_list shows the header even for no rows.
      ctx.stdout.write(emptyTable(o.column && o.column.length > 0 ? o.column : LIST_COLUMNS));
      return;
    }
    emitList(ctx.stdout, LIST_COLUMNS, rows, o, LIST_STYLE);
  });

  addOutputOptions(
    quotaIdentOptions(quotas.command('show').description("show a project's quota for a resource")),
  ).action(async (o: QuotaOptions) => {
    const client = await ctx.client();
    emitObject(ctx.stdout, await client.getQuota(o.projectId, o.resource), o, PROPERTY_STYLE);
  });

  addOutputOptions(
    hardLimitOption(quotaIdentOptions(quotas.command('update').description('update a quota'))),
  ).action(async (o: QuotaOptions) => {
    const client = await ctx.client();
    await quotaCall(
      (e) => `Update quota for project_id ${o.projectId} resource ${o.resource} failed: ${e}`,
      async () => {
        const body = { project_id: o.projectId, resource: o.resource, hard_limit: o.hardLimit };
        emitObject(ctx.stdout, await client.updateQuota(o.projectId, o.resource, body), o, PROPERTY_STYLE);
      },
    );
  });

  quotaIdentOptions(quotas.command('delete').description('delete a quota')).action(
    async (o: QuotaOptions) => {
      const client = await ctx.client();
      await quotaCall(
        (e) => `Quota delete failed for project id ${o.projectId} and resource ${o.resource}: ${e}`,
        async () => {
          await client.deleteQuota(o.projectId, o.resource);
          ctx.stdout.write(
            `Request to delete quota for project id ${o.projectId} and resource ${o.resource} has been accepted.\n`,
          );
        },
      );
    },
  );
}

function emptyTable(columns: readonly string[]): string {
  const rule = `+${columns.map((c) => '-'.repeat(c.length + 2)).join('+')}+\n`;
  return `${rule}| ${columns.join(' | ')} |\n${rule}${rule}`;
}
