import type { Command } from 'commander';
import type { CoeContext } from '../coe-context.ts';
import { addOutputOptions, emitList, emitObject, type OutputOptions } from '../output.ts';
import { field } from './common.ts';
import { PROPERTY_STYLE } from './quotas.ts';

const SERVICE_COLUMNS = [
  'id',
  'host',
  'binary',
  'state',
  'disabled',
  'disabled_reason',
  'created_at',
  'updated_at',
];

/** `coe service list` and `coe stats list` */
export function registerServiceAndStatsCommands(program: Command, ctx: CoeContext): void {
  const service = program.command('service').description('Magnum services');
  addOutputOptions(service.command('list').description('list the Magnum services and their state')).action(
    async (o: OutputOptions) => {
      const client = await ctx.client();
      const items = await client.listServices();
      emitList(
        ctx.stdout,
        SERVICE_COLUMNS,
        items.map((s) => SERVICE_COLUMNS.map((k) => field(s, k))),
        o,
      );
    },
  );

  const stats = program.command('stats').description('usage statistics');
  addOutputOptions(
    stats
      .command('list')
      .description("show a project's number of clusters and nodes")
      .argument('<project>', 'project ID'),
  ).action(async (projectId: string, o: OutputOptions) => {
    const client = await ctx.client();
    emitObject(ctx.stdout, await client.stats(projectId), o, PROPERTY_STYLE);
  });
}
