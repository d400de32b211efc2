import { isIP } from 'node:net';
import { z } from 'zod';
import { InputError } from '../../domain/index.ts';

/**
 * Request bodies of the Magnum v1 API (wire form, snake_case), validated the way Magnum's
 * WSME types do: unknown attributes, wrong types and out-of-range values are 400s that name
 * the attribute. `null` means "not given", as the real client sends unset options as null.
 */

const str = (max = 255, min = 1) => z.string().min(min).max(max);
const int = (min?: number, max?: number) => {
  let s = z.number().int();
  if (min !== undefined) s = s.min(min);
  if (max !== undefined) s = s.max(max);
  return s;
};

const TRUE = new Set(['1', 't', 'true', 'on', 'y', 'yes']);
const FALSE = new Set(['0', 'f', 'false', 'off', 'n', 'no']);
/** Magnum's boolean: JSON booleans, or the strings oslo's strict `bool_from_string` accepts. */
export const boolish = z.union([z.boolean(), z.string(), z.number()]).transform((v, ctx) => {
  if (typeof v === 'boolean') return v;
  const s = String(v).trim().toLowerCase();
  if (TRUE.has(s)) return true;
  if (FALSE.has(s)) return false;
  ctx.addIssue({
    code: 'custom',
    message: `Unrecognized value '${String(v)}', acceptable values are: true, false, 1, 0, yes, no, on, off`,
  });
  return z.NEVER;
});

const scalar = z.union([z.string(), z.number(), z.boolean()]);
/** `labels`: a dict of strings, numbers or booleans. */
export const labelsSchema = z.record(z.string(), scalar);

/** A comma-separated list of IP addresses (`dns_nameserver`). */
const dnsList = z.string().refine((v) => v.split(',').every((ip) => isIP(ip.trim()) !== 0), {
  message: 'must be a comma-separated list of IP addresses',
});

const opt = <T extends z.ZodType>(t: T) => t.nullable().optional();

export const TemplateCreateSchema = z.strictObject({
  name: opt(str()),
  coe: z.string(),
  image_id: str(),
  flavor_id: opt(str()),
  master_flavor_id: opt(str()),
  dns_nameserver: opt(dnsList),
  keypair_id: opt(str()),
  external_network_id: opt(str()),
  fixed_network: opt(str()),
  fixed_subnet: opt(str()),
  network_driver: opt(str()),
  apiserver_port: opt(int(1024, 65535)),
  docker_volume_size: opt(int(1)),
  cluster_distro: opt(str()),
  http_proxy: opt(str()),
  https_proxy: opt(str()),
  no_proxy: opt(str()),
  volume_driver: opt(str()),
  registry_enabled: opt(boolish),
  labels: opt(labelsSchema),
  tls_disabled: opt(boolish),
  public: opt(boolish),
  server_type: opt(z.enum(['vm', 'bm'])),
  insecure_registry: opt(str()),
  docker_storage_driver: opt(str()),
  master_lb_enabled: opt(boolish),
  floating_ip_enabled: opt(boolish),
  hidden: opt(boolish),
  tags: opt(str(255, 0)),
  driver: opt(str(255, 0)),
});
export type TemplateCreateBody = z.infer<typeof TemplateCreateSchema>;

/** Magnum's cluster name rule. */
export const CLUSTER_NAME = /^[a-zA-Z][a-zA-Z0-9_.-]*$/;

export const ClusterCreateSchema = z.strictObject({
  name: opt(
    str(242).regex(
      CLUSTER_NAME,
      'must start with a letter and contain only letters, digits, "_", "." and "-"',
    ),
  ),
  cluster_template_id: opt(str()),
  keypair: opt(str()),
  node_count: opt(int(0)),
  master_count: opt(int(1)),
  docker_volume_size: opt(int(1)),
  labels: opt(labelsSchema),
  master_flavor_id: opt(str()),
  flavor_id: opt(str()),
  create_timeout: opt(int(0)),
  discovery_url: opt(z.string()),
  fixed_network: opt(str()),
  fixed_subnet: opt(str()),
  floating_ip_enabled: opt(boolish),
  master_lb_enabled: opt(boolish),
  merge_labels: opt(boolish),
});
export type ClusterCreateBody = z.infer<typeof ClusterCreateSchema>;

export const TaintSchema = z.strictObject({
  key: str(253),
  value: opt(z.string().max(63)),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
});
export const NodeLabelsSchema = z.record(z.string(), z.string());

export const NodeGroupCreateSchema = z.strictObject({
  name: str(),
  node_count: opt(int(0)),
  min_node_count: opt(int(0)),
  max_node_count: opt(int(0)),
  role: opt(str()),
  flavor_id: opt(str()),
  image_id: opt(str()),
  docker_volume_size: opt(int(1)),
  labels: opt(labelsSchema),
  merge_labels: opt(boolish),
  node_labels: opt(NodeLabelsSchema),
  node_taints: opt(z.array(TaintSchema)),
});
export type NodeGroupCreateBody = z.infer<typeof NodeGroupCreateSchema>;

export const ResizeSchema = z.strictObject({
  node_count: int(0),
  nodes_to_remove: opt(z.array(z.string())),
  nodegroup: opt(str()),
});

export const UpgradeSchema = z.strictObject({
  cluster_template: str(),
  max_batch_size: opt(int(1)),
  nodegroup: opt(str()),
});

export const CertificateSignSchema = z.strictObject({
  cluster_uuid: str(),
  csr: z.string().min(1),
  ca_cert_type: opt(z.enum(['kubernetes', 'etcd', 'front_proxy', 'front-proxy'])),
});

export const QuotaCreateSchema = z.strictObject({
  project_id: str(),
  resource: z.string(),
  hard_limit: opt(int(0)),
});

export const QuotaPatchSchema = z.strictObject({
  project_id: opt(z.string()),
  resource: opt(z.string()),
  hard_limit: int(0),
});

/** One JSON-Patch operation as Magnum accepts it. */
export const PatchOpSchema = z.strictObject({
  op: z.enum(['add', 'replace', 'remove']),
  path: z.string().regex(/^(\/[\w-]+)+$/, 'must look like /attribute or /attribute/key'),
  value: z.unknown().optional(),
});
export const PatchSchema = z.array(PatchOpSchema).min(1);
export type PatchOp = z.infer<typeof PatchOpSchema>;

function lower(message: string): string {
  return message.charAt(0).toLowerCase() + message.slice(1);
}

function show(v: unknown): string {
  if (v === undefined) return '';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let cur = body;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

/** Turn the first zod issue into Magnum's "Invalid input for field/attribute X" 400. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
  if (body === undefined || body === null || Buffer.isBuffer(body) || typeof body === 'string') {
    throw new InputError(
      `The request body is missing or not JSON; send the ${what} as a JSON document with Content-Type: application/json.`,
      {
        code: 'Invalid',
      },
    );
  }
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    throw new InputError(`Unknown attribute for argument ${what}: ${issue.keys.join(', ')}`, {
      code: 'UnknownAttribute',
    });
  }
  const field = issue.path.map(String).join('.');
  if (field === '') {
    throw new InputError(`Invalid input for ${what}: ${lower(issue.message)}.`, { code: 'Invalid' });
  }
  const value = valueAt(body, issue.path);
  if (value === undefined && issue.code === 'invalid_type') {
    throw new InputError(`Mandatory field missing: ${field} is required in the ${what}.`, {
      code: 'MissingAttribute',
    });
  }
  throw new InputError(
    `Invalid input for field/attribute ${field}: ${lower(issue.message)} (got '${show(value)}').`,
    { code: 'Invalid' },
  );
}
