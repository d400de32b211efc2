import { Argument, Option, type Command } from 'commander';
import type { CoeContext } from '../coe-context.ts';
import { addOutputOptions, collect, emitList, emitShow, type OutputOptions } from '../output.ts';
import { argsToPatch, parseLabels, PATCH_VERBS, type PatchVerb } from '../label-args.ts';
import { parseInteger } from '../arg-parsers.ts';
import type { MagnumClient, WireObject } from '../magnum-client.ts';
import {
  addWaitOptions,
  waitFor,
  waitForAll,
  type AwaitedAction,
  type WaitOptions,
  type WaitTarget,
} from '../wait.ts';
import { isNotFoundError } from '../describe-error.ts';
import { addListOptions, field, forEachName, listQuery, type ListOptions } from './common.ts';

/** Fields `nodegroup show` prints, in the `openstack` client's order. */
export const NODEGROUP_FIELDS = [
  'uuid',
  'name',
  'cluster_id',
  'project_id',
  'docker_volume_size',
  'labels',
  'labels_overridden',
  'labels_skipped',
  'labels_added',
  'flavor_id',
  'image_id',
  'node_addresses',
  'node_count',
  'role',
  'max_node_count',
  'min_node_count',
  'is_default',
  'stack_id',
  'status',
  'status_reason',
] as const;

/** Columns of `nodegroup list`. */
export const NODEGROUP_LIST_COLUMNS = [
  'uuid',
  'name',
  'flavor_id',
  'image_id',
  'node_count',
  'status',
  'role',
];

/** Poll a nodegroup. */
export function nodeGroupTarget(
  client: MagnumClient,
  cluster: string,
  ng: string,
  action: AwaitedAction,
  label = ng,
): WaitTarget {
  return {
    label: `nodegroup ${label}`,
    action,
    async observe() {
      try {
        const n = await client.getNodeGroup(cluster, ng);
        return { status: n.status ?? 'UNKNOWN', reason: n.status_reason ?? null };
      } catch (err) {
        if (isNotFoundError(err)) return null;
        throw err;
      }
    },
  };
}

interface CreateOptions extends WaitOptions {
  dockerVolumeSize?: number;
  labels?: string[];
  nodeCount: number;
  minNodes: number;
  maxNodes?: number;
  role: string;
  image?: string;
  flavor?: string;
  mergeLabels?: boolean;
}

/** The POST body of `nodegroup create`: name, counts and role always; the rest only when given. */
export function nodeGroupCreateBody(name: string, o: CreateOptions): WireObject {
  const body: WireObject = {
    name,
    node_count: o.nodeCount,
    max_node_count: o.maxNodes ?? null,
    min_node_count: o.minNodes,
    role: o.role,
  };
  if (o.labels !== undefined) body.labels = parseLabels(o.labels);
  if (o.dockerVolumeSize !== undefined) body.docker_volume_size = o.dockerVolumeSize;
  if (o.flavor !== undefined) body.flavor_id = o.flavor;
  if (o.image !== undefined) body.image_id = o.image;
  if (o.mergeLabels) body.merge_labels = true;
  return body;
}

/** `coe nodegroup ...` */
export function registerNodeGroupCommands(program: Command, ctx: CoeContext): void {
  const nodegroup = program.command('nodegroup').description('manage the nodegroups of a cluster');

  addWaitOptions(
    nodegroup
      .command('create')
      .description('create a nodegroup, e.g. `coe nodegroup create --node-count 5 mycluster worker-group2`')
      .argument('<cluster>', 'name or UUID of the cluster')
      .argument('<name>', 'name of the nodegroup to create')
      .addOption(
        new Option('--docker-volume-size <size>', 'size in GB of the container volume').argParser(
          parseInteger('--docker-volume-size', 1),
        ),
      )
      .addOption(
        new Option(
          '--labels <KEY1=VALUE1,KEY2=VALUE2;KEY3=VALUE3>',
          'labels, e.g. availability_zone=AZ-2; may be repeated',
        ).argParser(collect),
      )
      .addOption(
        new Option('--node-count <node-count>', 'number of nodes')
          .argParser(parseInteger('--node-count', 0))
          .default(1),
      )
      .addOption(
        new Option('--min-nodes <min-nodes>', 'minimum node count')
          .argParser(parseInteger('--min-nodes', 0))
          .default(0),
      )
      .addOption(
        new Option('--max-nodes <max-nodes>', 'maximum node count').argParser(parseInteger('--max-nodes', 0)),
      )
      .option('--role <role>', 'role of the nodegroup', 'worker')
      .option('--image <image>', 'name or UUID of the base image of the nodes')
      .option('--flavor <flavor>', 'flavor name or UUID of the nodes')
      .option('--merge-labels', "merge the given labels with the cluster's"),
    'the nodegroup is CREATE_COMPLETE',
  ).action(async (cluster: string, name: string, o: CreateOptions) => {
    const body = nodeGroupCreateBody(name, o);
    const client = await ctx.client();
    const ng = await client.createNodeGroup(cluster, body);
    ctx.stdout.write(`Request to create nodegroup ${ng.uuid} accepted\n`);
    if (o.wait) await waitFor(ctx, nodeGroupTarget(client, cluster, ng.uuid, 'CREATE', name), o);
  });

  addListOptions(
    addOutputOptions(
      nodegroup
        .command('list')
        .description('list the nodegroups of a cluster')
        .argument('<cluster>', 'name or UUID of the cluster'),
    ),
    'nodegroups',
  )
    .option('--role <role>', 'list only the nodegroups with this role')
    .action(async (cluster: string, o: ListOptions & OutputOptions & { role?: string }) => {
      const client = await ctx.client();
      const items = await client.listNodeGroups(cluster, listQuery(o), o.role);
      emitList(
        ctx.stdout,
        NODEGROUP_LIST_COLUMNS,
        items.map((n) => NODEGROUP_LIST_COLUMNS.map((k) => field(n, k))),
        o,
      );
    });

  addOutputOptions(
    nodegroup
      .command('show')
      .description('show a nodegroup')
      .argument('<cluster>', 'name or UUID of the cluster')
      .argument('<nodegroup>', 'name or UUID of the nodegroup'),
  ).action(async (cluster: string, ng: string, o: OutputOptions) => {
    const client = await ctx.client();
    const n = await client.getNodeGroup(cluster, ng);
    emitShow(
      ctx.stdout,
      NODEGROUP_FIELDS,
      NODEGROUP_FIELDS.map((f) => field(n, f)),
      o,
    );
  });

  addWaitOptions(
    nodegroup
      .command('update')
      .description('update a nodegroup, e.g. `coe nodegroup update mycluster ng1 replace max_node_count=10`')
      .argument('<cluster>', 'name or UUID of the cluster')
      .argument('<nodegroup>', 'name or UUID of the nodegroup')
      .addArgument(new Argument('<op>', 'operation').choices(PATCH_VERBS as PatchVerb[]))
      .argument('<path=value...>', 'attributes to add or replace (only the path for remove)'),
    'the update is complete',
  ).action(async (cluster: string, ng: string, op: PatchVerb, attrs: string[], o: WaitOptions) => {
    const patch = argsToPatch(op, attrs);
    const client = await ctx.client();
    await client.updateNodeGroup(cluster, ng, patch);
    ctx.stdout.write(`Request to update nodegroup ${ng} has been accepted.\n`);
    if (o.wait) await waitFor(ctx, nodeGroupTarget(client, cluster, ng, 'UPDATE'), o);
  });

  addWaitOptions(
    nodegroup
      .command('delete')
      .description('delete nodegroups')
      .argument('<cluster>', 'name or UUID of the cluster')
      .argument('<nodegroup...>', 'names or UUIDs of the nodegroups'),
    'the nodegroups are gone',
  ).action(async (cluster: string, ngs: string[], o: WaitOptions) => {
    const client = await ctx.client();
    const accepted: WaitTarget[] = [];
    try {
      await forEachName(
        ctx,
        ngs,
        async (ng) => {
          const uuid = o.wait ? (await client.getNodeGroup(cluster, ng)).uuid : ng;
          await client.deleteNodeGroup(cluster, ng);
          ctx.stdout.write(`Request to delete nodegroup ${ng} has been accepted.\n`);
          accepted.push(nodeGroupTarget(client, cluster, uuid, 'DELETE', ng));
        },
        (ng, err) => `Delete for nodegroup ${ng} failed: ${err}`,
      );
    } finally {
      if (o.wait) await waitForAll(ctx, accepted, o);
    }
  });
}
