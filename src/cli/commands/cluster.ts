import { Argument, Option, type Command } from 'commander';
import type { CoeContext } from '../coe-context.ts';
import { addOutputOptions, collect, emitList, emitShow, type OutputOptions } from '../output.ts';
import { argsToPatch, parseLabels, PATCH_VERBS, type PatchVerb } from '../label-args.ts';
import { parseInteger, parseNumber } from '../arg-parsers.ts';
import { UsageError } from '../coe-errors.ts';
import type { MagnumClient, WireObject } from '../magnum-client.ts';
import {
  addWaitOptions,
  waitFor,
  waitForAll,
  type WaitOptions,
  type WaitTarget,
  type AwaitedAction,
} from '../wait.ts';
import { addListOptions, field, forEachName, listQuery, type ListOptions } from './common.ts';
import { registerClusterConfigCommand } from './cluster-config.ts';
import { isNotFoundError } from '../describe-error.ts';

/** Fields `cluster show` prints, in the `openstack` client's order. */
export const CLUSTER_FIELDS = [
  'status',
  'health_status',
  'cluster_template_id',
  'node_addresses',
  'uuid',
  'stack_id',
  'status_reason',
  'created_at',
  'updated_at',
  'coe_version',
  'labels',
  'labels_overridden',
  'labels_skipped',
  'labels_added',
  'fixed_network',
  'fixed_subnet',
  'floating_ip_enabled',
  'faults',
  'keypair',
  'api_address',
  'master_addresses',
  'master_lb_enabled',
  'create_timeout',
  'node_count',
  'discovery_url',
  'docker_volume_size',
  'master_count',
  'container_version',
  'name',
  'master_flavor_id',
  'flavor_id',
  'health_status_reason',
  'project_id',
] as const;

/** Columns of `cluster list`. */
export const CLUSTER_LIST_COLUMNS = [
  'uuid',
  'name',
  'keypair',
  'node_count',
  'master_count',
  'status',
  'health_status',
];

/** Poll a cluster by name or uuid. */
export function clusterTarget(
  client: MagnumClient,
  ident: string,
  action: AwaitedAction,
  label = ident,
): WaitTarget {
  return {
    label: `cluster ${label}`,
    action,
    async observe() {
      try {
        const c = await client.getCluster(ident);
        return { status: c.status ?? 'UNKNOWN', reason: c.status_reason ?? null };
      } catch (err) {
        if (isNotFoundError(err)) return null;
        throw err;
      }
    },
  };
}

interface CreateOptions extends WaitOptions {
  clusterTemplate: string;
  discoveryUrl?: string;
  dockerVolumeSize?: number;
  labels?: string[];
  keypair?: string;
  masterCount: number;
  nodeCount: number;
  /** create_timeout, minutes; also the --wait limit. */
  timeout: number;
  masterFlavor?: string;
  flavor?: string;
  fixedNetwork?: string;
  fixedSubnet?: string;
  floatingIpEnabled?: boolean;
  floatingIpDisabled?: boolean;
  mergeLabels?: boolean;
  masterLbEnabled?: boolean;
  masterLbDisabled?: boolean;
}

/**
 * The POST body of `cluster create`, like the real client: `create_timeout`, `discovery_url`,
 * `keypair`, `master_count`, `node_count` always; the rest only when given.
 * Unlike openstack 4.0.0, `--master-lb-enabled` sends true.
 */
export function clusterCreateBody(name: string, o: CreateOptions): WireObject {
  const body: WireObject = {
    cluster_template_id: o.clusterTemplate,
    create_timeout: o.timeout,
    discovery_url: o.discoveryUrl ?? null,
    keypair: o.keypair ?? null,
    master_count: o.masterCount,
    name,
    node_count: o.nodeCount,
  };
  if (o.floatingIpEnabled && o.floatingIpDisabled) {
    throw new UsageError('--floating-ip-enabled and --floating-ip-disabled are mutually exclusive');
  }
  if (o.floatingIpEnabled) body.floating_ip_enabled = true;
  if (o.floatingIpDisabled) body.floating_ip_enabled = false;
  if (o.labels !== undefined) body.labels = parseLabels(o.labels);
  if (o.dockerVolumeSize !== undefined) body.docker_volume_size = o.dockerVolumeSize;
  if (o.masterFlavor !== undefined) body.master_flavor_id = o.masterFlavor;
  if (o.flavor !== undefined) body.flavor_id = o.flavor;
  if (o.fixedNetwork !== undefined) body.fixed_network = o.fixedNetwork;
  if (o.fixedSubnet !== undefined) body.fixed_subnet = o.fixedSubnet;
  if (o.mergeLabels) body.merge_labels = true;
  if (o.masterLbEnabled && o.masterLbDisabled) {
    throw new UsageError('--master-lb-enabled and --master-lb-disabled are mutually exclusive');
  }
  if (o.masterLbEnabled) body.master_lb_enabled = true;
  if (o.masterLbDisabled) {
    if (o.masterCount > 1)
      throw new UsageError('Master node count can only be one if master loadbalancer is disabled.');
    body.master_lb_enabled = false;
  }
  return body;
}

/** The POST body of `cluster resize`. */
export function resizeBody(
  nodeCount: number,
  o: { nodesToRemove?: string[]; nodegroup?: string },
): WireObject {
  const body: WireObject = { node_count: nodeCount };
  if (o.nodesToRemove && o.nodesToRemove.length > 0) body.nodes_to_remove = o.nodesToRemove;
  if (o.nodegroup !== undefined) body.nodegroup = o.nodegroup;
  return body;
}

/** `coe cluster ...` */
export function registerClusterCommands(program: Command, ctx: CoeContext): Command {
  const cluster = program.command('cluster').description('manage clusters and cluster templates');

  addWaitOptions(
    cluster
      .command('create')
      .description('create a cluster')
      .argument('<name>', 'name of the cluster to create')
      .requiredOption('--cluster-template <cluster-template>', 'ID or name of the cluster template')
      .option('--discovery-url <discovery-url>', 'custom discovery URL for node discovery')
      .addOption(
        new Option('--docker-volume-size <size>', 'size in GB of the container volume').argParser(
          parseInteger('--docker-volume-size', 1),
        ),
      )
      .addOption(
        new Option('--labels <KEY1=VALUE1,KEY2=VALUE2;KEY3=VALUE3>', 'labels; may be repeated').argParser(
          collect,
        ),
      )
      .option('--keypair <keypair>', 'name or UUID of the SSH keypair')
      .addOption(
        new Option('--master-count <master-count>', 'number of master nodes')
          .argParser(parseInteger('--master-count', 1))
          .default(1),
      )
      .addOption(
        new Option('--node-count <node-count>', 'number of worker nodes')
          .argParser(parseInteger('--node-count', 0))
          .default(1),
      )
      .addOption(
        new Option('--timeout <minutes>', 'cluster creation timeout (also the --wait limit)')
          .argParser(parseNumber('--timeout', 0))
          .default(60),
      )
      .option('--master-flavor <master-flavor>', 'flavor name or UUID of the master nodes')
      .option('--flavor <flavor>', 'flavor name or UUID of the worker nodes')
      .option('--fixed-network <fixed-network>', 'private network name or UUID')
      .option('--fixed-subnet <fixed-subnet>', 'private subnet name or UUID')
      .option('--floating-ip-enabled', 'give the nodes floating IPs')
      .option('--floating-ip-disabled', 'give the nodes no floating IPs')
      .option('--merge-labels', "merge the given labels with the cluster template's")
      .option('--master-lb-enabled', 'create a load balancer for the master nodes')
      .option('--master-lb-disabled', 'create no load balancer for the master nodes (one master only)'),
    'the cluster is CREATE_COMPLETE',
    false,
  ).action(async (name: string, o: CreateOptions) => {
    const body = clusterCreateBody(name, o);
    const client = await ctx.client();
    const uuid = await client.createCluster(body);
    ctx.stdout.write(`Request to create cluster ${uuid} accepted\n`);
    if (o.wait) await waitFor(ctx, clusterTarget(client, uuid, 'CREATE', name), o);
  });

  addListOptions(addOutputOptions(cluster.command('list').description('list clusters')), 'clusters').action(
    async (o: ListOptions & OutputOptions) => {
      const client = await ctx.client();
      const items = await client.listClusters(listQuery(o));
      emitList(
        ctx.stdout,
        CLUSTER_LIST_COLUMNS,
        items.map((c) => CLUSTER_LIST_COLUMNS.map((k) => field(c, k))),
        o,
      );
    },
  );

  addOutputOptions(
    cluster.command('show').description('show a cluster').argument('<cluster>', 'ID or name of the cluster'),
  ).action(async (ident: string, o: OutputOptions) => {
    const client = await ctx.client();
    const c = await client.getCluster(ident);
    emitShow(
      ctx.stdout,
      CLUSTER_FIELDS,
      CLUSTER_FIELDS.map((f) => field(c, f)),
      o,
    );
  });

  addWaitOptions(
    cluster
      .command('update')
      .description('update a cluster, e.g. `coe cluster update mycluster replace node_count=4`')
      .argument('<cluster>', 'name or UUID of the cluster')
      .addArgument(new Argument('<op>', 'operation').choices(PATCH_VERBS as PatchVerb[]))
      .argument('<path=value...>', 'attributes to add or replace (only the path for remove)')
      .option('--rollback', 'roll the cluster back if the update fails'),
    'the update is complete',
  ).action(async (ident: string, op: PatchVerb, attrs: string[], o: WaitOptions & { rollback?: boolean }) => {
    const patch = argsToPatch(op, attrs);
    const client = await ctx.client();
    await client.updateCluster(ident, patch, o.rollback === true);
    ctx.stdout.write(`Request to update cluster ${ident} has been accepted.\n`);
    if (o.wait) await waitFor(ctx, clusterTarget(client, ident, 'UPDATE'), o);
  });

  addWaitOptions(
    cluster
      .command('delete')
      .description('delete clusters')
      .argument('<cluster...>', 'IDs or names of the clusters'),
    'the clusters are gone',
  ).action(async (idents: string[], o: WaitOptions) => {
    const client = await ctx.client();
    const accepted: WaitTarget[] = [];
    try {
      await forEachName(
        ctx,
        idents,
        async (c) => {
          // Poll by uuid: the name could be reused by a new cluster while we wait.
          const uuid = o.wait ? (await client.getCluster(c)).uuid : c;
          await client.deleteCluster(c);
          ctx.stdout.write(`Request to delete cluster ${c} has been accepted.\n`);
          accepted.push(clusterTarget(client, uuid, 'DELETE', c));
        },
        (c, err) => `Delete for cluster ${c} failed: ${err}`,
      );
    } finally {
      if (o.wait) await waitForAll(ctx, accepted, o);
    }
  });

  addWaitOptions(
    cluster
      .command('resize')
      .description('resize a nodegroup of a cluster (default-worker unless --nodegroup)')
      .argument('<cluster>', 'name or UUID of the cluster')
      .argument('<node-count>', 'desired node count', parseInteger('<node-count>', 0))
      .addOption(
        new Option(
          '--nodes-to-remove <server-uuid>',
          'server ID of a node to remove; may be repeated',
        ).argParser(collect),
      )
      .option('--nodegroup <nodegroup>', 'name or UUID of the nodegroup'),
    'the resize is complete',
  ).action(
    async (
      ident: string,
      nodeCount: number,
      o: WaitOptions & { nodesToRemove?: string[]; nodegroup?: string },
    ) => {
      const client = await ctx.client();
      const c = await client.getCluster(ident);
      await client.resizeCluster(c.uuid, resizeBody(nodeCount, o));
      ctx.stdout.write(`Request to resize cluster ${ident} has been accepted.\n`);
      if (o.wait) await waitFor(ctx, clusterTarget(client, c.uuid, 'UPDATE', ident), o);
    },
  );

  addWaitOptions(
    cluster
      .command('upgrade')
      .description('upgrade a cluster to another cluster template')
      .argument('<cluster>', 'name or UUID of the cluster')
      .argument('<cluster-template>', 'ID or name of the cluster template to upgrade to')
      .addOption(
        new Option('--max-batch-size <max-batch-size>', 'maximum number of nodes upgraded at a time')
          .argParser(parseInteger('--max-batch-size', 1))
          .default(1),
      )
      .option('--nodegroup <nodegroup>', 'name or UUID of the nodegroup'),
    'the upgrade is complete',
  ).action(
    async (
      ident: string,
      template: string,
      o: WaitOptions & { maxBatchSize: number; nodegroup?: string },
    ) => {
      const client = await ctx.client();
      const c = await client.getCluster(ident);
      const body: WireObject = { cluster_template: template, max_batch_size: o.maxBatchSize };
      if (o.nodegroup !== undefined) body.nodegroup = o.nodegroup;
      await client.upgradeCluster(c.uuid, body);
      ctx.stdout.write(`Request to upgrade cluster ${ident} has been accepted.\n`);
      if (o.wait) await waitFor(ctx, clusterTarget(client, c.uuid, 'UPDATE', ident), o);
    },
  );

  registerClusterConfigCommand(cluster, ctx);
  return cluster;
}
