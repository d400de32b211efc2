import { Argument, Option, type Command } from 'commander';
import type { CoeContext } from '../coe-context.ts';
import { addOutputOptions, collect, emitList, emitShow, type OutputOptions } from '../output.ts';
import { argsToPatch, parseLabels, PATCH_VERBS, type PatchVerb } from '../label-args.ts';
import { parseInteger } from '../arg-parsers.ts';
import { UsageError } from '../coe-errors.ts';
import type { TemplateObject, WireObject } from '../magnum-client.ts';
import { addListOptions, field, forEachName, listQuery, notice, type ListOptions } from './common.ts';

/** Fields `cluster template show/create/update` print, in the `openstack` client's order. */
export const TEMPLATE_FIELDS = [
  'insecure_registry',
  'labels',
  'updated_at',
  'floating_ip_enabled',
  'fixed_subnet',
  'master_flavor_id',
  'uuid',
  'no_proxy',
  'https_proxy',
  'tls_disabled',
  'keypair_id',
  'public',
  'http_proxy',
  'docker_volume_size',
  'server_type',
  'external_network_id',
  'cluster_distro',
  'image_id',
  'volume_driver',
  'registry_enabled',
  'docker_storage_driver',
  'apiserver_port',
  'name',
  'created_at',
  'network_driver',
  'fixed_network',
  'coe',
  'flavor_id',
  'master_lb_enabled',
  'dns_nameserver',
  'hidden',
  'tags',
] as const;

const LIST_COLUMNS = ['uuid', 'name', 'tags'];
const DEPRECATED_STORAGE_DRIVERS = ['devicemapper', 'overlay'];

/** Templates print null as `-` in tables, like the `openstack` client. */
function showTemplate(ctx: CoeContext, t: TemplateObject, options: OutputOptions): void {
  emitShow(
    ctx.stdout,
    TEMPLATE_FIELDS,
    TEMPLATE_FIELDS.map((f) => field(t, f)),
    options,
    { none: '-' },
  );
}

interface CreateOptions extends OutputOptions {
  coe: string;
  image: string;
  externalNetwork: string;
  keypair?: string;
  fixedNetwork?: string;
  fixedSubnet?: string;
  networkDriver?: string;
  volumeDriver?: string;
  dnsNameserver: string;
  flavor: string;
  masterFlavor?: string;
  dockerVolumeSize?: number;
  dockerStorageDriver: string;
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
  labels?: string[];
  tlsDisabled?: boolean;
  public?: boolean;
  registryEnabled?: boolean;
  serverType: string;
  masterLbEnabled?: boolean;
  floatingIpEnabled?: boolean;
  floatingIpDisabled?: boolean;
  hidden?: boolean;
  visible?: boolean;
  tags?: string[];
}

/** The POST body of `cluster template create`: every key, unset ones as null, like the real client. */
export function templateCreateBody(name: string, o: CreateOptions): WireObject {
  const body: WireObject = {
    name,
    image_id: o.image,
    keypair_id: o.keypair ?? null,
    external_network_id: o.externalNetwork,
    coe: o.coe,
    fixed_network: o.fixedNetwork ?? null,
    fixed_subnet: o.fixedSubnet ?? null,
    network_driver: o.networkDriver ?? null,
    volume_driver: o.volumeDriver ?? null,
    dns_nameserver: o.dnsNameserver,
    flavor_id: o.flavor,
    master_flavor_id: o.masterFlavor ?? null,
    docker_volume_size: o.dockerVolumeSize ?? null,
    docker_storage_driver: o.dockerStorageDriver,
    http_proxy: o.httpProxy ?? null,
    https_proxy: o.httpsProxy ?? null,
    no_proxy: o.noProxy ?? null,
    labels: parseLabels(o.labels),
    tls_disabled: o.tlsDisabled ?? false,
    public: o.public ?? false,
    registry_enabled: o.registryEnabled ?? false,
    server_type: o.serverType,
    master_lb_enabled: o.masterLbEnabled ?? false,
  };
  if (o.hidden && !o.visible) body.hidden = true;
  if (o.tags && o.tags.length > 0) {
    body.tags = [...new Set(o.tags.join(',').split(','))].join(',');
  }
  if (o.floatingIpEnabled && o.floatingIpDisabled) {
    throw new UsageError('--floating-ip-enabled and --floating-ip-disabled are mutually exclusive');
  }
  if (o.floatingIpEnabled) body.floating_ip_enabled = true;
  if (o.floatingIpDisabled) body.floating_ip_enabled = false;
  return body;
}

/** `coe cluster template ...` */
export function registerTemplateCommands(cluster: Command, ctx: CoeContext): void {
  const template = cluster.command('template').description('manage cluster templates');

  addOutputOptions(
    template
      .command('create')
      .description('create a cluster template')
      .argument('<name>', 'name of the cluster template to create')
      .requiredOption('--coe <coe>', 'container orchestration engine, e.g. kubernetes')
      .requiredOption('--image <image>', 'name or UUID of the base image of the nodes')
      .requiredOption('--external-network <external-network>', 'external network name or UUID')
      .option('--keypair <keypair>', 'name or UUID of the SSH keypair to load into the nodes')
      .option('--fixed-network <fixed-network>', 'private network name or UUID')
      .option('--fixed-subnet <fixed-subnet>', 'private subnet name or UUID')
      .option('--network-driver <network-driver>', 'network driver, e.g. calico')
      .option('--volume-driver <volume-driver>', 'volume driver, e.g. cinder')
      .option('--dns-nameserver <dns-nameserver>', 'DNS nameserver of the cluster', '8.8.8.8')
      .option('--flavor <flavor>', 'flavor of the worker nodes', 'm1.medium')
      .option('--master-flavor <master-flavor>', 'flavor of the master nodes')
      .addOption(
        new Option('--docker-volume-size <size>', 'size in GB of the container volume').argParser(
          parseInteger('--docker-volume-size', 1),
        ),
      )
      .option('--docker-storage-driver <driver>', 'container storage driver', 'overlay2')
      .option('--http-proxy <http-proxy>', 'http_proxy of the nodes')
      .option('--https-proxy <https-proxy>', 'https_proxy of the nodes')
      .option('--no-proxy <no-proxy>', 'no_proxy of the nodes')
      .addOption(
        new Option('--labels <KEY1=VALUE1,KEY2=VALUE2;KEY3=VALUE3>', 'labels; may be repeated').argParser(
          collect,
        ),
      )
      .option('--tls-disabled', 'disable TLS in the cluster')
      .option('--public', 'make the cluster template public')
      .option('--registry-enabled', 'enable a docker registry in the cluster')
      .option('--server-type <server-type>', 'server type', 'vm')
      .option('--master-lb-enabled', 'create a load balancer for the master nodes')
      .option('--floating-ip-enabled', 'give the nodes floating IPs')
      .option('--floating-ip-disabled', 'give the nodes no floating IPs')
      .option('--hidden', 'hide the cluster template')
      .option('--visible', 'make the cluster template visible')
      .addOption(new Option('--tags <tags>', 'tags, comma-separated; may be repeated').argParser(collect)),
  ).action(async (name: string, o: CreateOptions) => {
    // commander turns --no-proxy into a negation of "proxy"; read the value it stored.
    const body = templateCreateBody(name, { ...o, ...noProxyValue(o) });
    if (DEPRECATED_STORAGE_DRIVERS.includes(o.dockerStorageDriver)) {
      ctx.stderr.write(
        `WARNING: Docker storage drivers ${DEPRECATED_STORAGE_DRIVERS.join(', ')} are deprecated; use overlay2.\n`,
      );
    }
    const client = await ctx.client();
    const t = await client.createTemplate(body);
    notice(ctx, o, `Request to create cluster template ${name} accepted`);
    showTemplate(ctx, t, o);
  });

  addListOptions(
    addOutputOptions(template.command('list').description('list cluster templates')),
    'cluster templates',
  )
    .option('--fields <fields>', 'comma-separated extra fields to show, e.g. coe,image_id,public')
    .action(async (o: ListOptions & OutputOptions & { fields?: string }) => {
      const columns = [...LIST_COLUMNS, ...(o.fields ? o.fields.split(',').filter((f) => f !== '') : [])];
      const client = await ctx.client();
      const items = await client.listTemplates(listQuery(o));
      emitList(
        ctx.stdout,
        columns,
        items.map((t) => columns.map((c) => field(t, c))),
        o,
      );
    });

  addOutputOptions(
    template
      .command('show')
      .description('show a cluster template')
      .argument('<cluster-template>', 'ID or name of the cluster template'),
  ).action(async (ident: string, o: OutputOptions) => {
    const client = await ctx.client();
    showTemplate(ctx, await client.getTemplate(ident), o);
  });

  addOutputOptions(
    template
      .command('update')
      .description('update a cluster template')
      .argument('<cluster-template>', 'name or UUID of the cluster template')
      .addArgument(new Argument('<op>', 'operation').choices(PATCH_VERBS as PatchVerb[]))
      .argument(
        '<path=value...>',
        'attributes to add or replace (only the path for remove), e.g. labels=a=1,b=2',
      ),
  ).action(async (ident: string, op: PatchVerb, attrs: string[], o: OutputOptions) => {
    const patch = argsToPatch(op, attrs);
    const client = await ctx.client();
    showTemplate(ctx, await client.updateTemplate(ident, patch), o);
  });

  template
    .command('delete')
    .description('delete cluster templates (exits 1 if any delete fails, unlike the openstack client)')
    .argument('<cluster-templates...>', 'IDs or names of the cluster templates')
    .action(async (idents: string[]) => {
      const client = await ctx.client();
      await forEachName(
        ctx,
        idents,
        async (t) => {
          await client.deleteTemplate(t);
          ctx.stdout.write(`Request to delete cluster template ${t} has been accepted.\n`);
        },
        (t, err) => `Delete for cluster template ${t} failed: ${err}`,
      );
    });
}

/** `--no-proxy <value>`: commander stores it under `proxy` (a negatable name); recover the value. */
function noProxyValue(o: CreateOptions): { noProxy?: string } {
  const raw = (o as unknown as { proxy?: unknown }).proxy;
  return typeof raw === 'string' ? { noProxy: raw } : {};
}
