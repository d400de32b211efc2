import { z } from 'zod';
import type { ApiObject, KubeObject, NewObject } from '../../domain/index.ts';
import { badRequest, invalid } from './status.ts';
import type { KubeResource } from './resources.ts';

/**
 * Stored objects as the kube façade serves them, and request bodies as it accepts them.
 * Served metadata omits empty maps and lists, as Kubernetes does. Accepted bodies keep only
 * what a client may set (labels, annotations, owner references, finalizers, spec); status is
 * the controllers' and is ignored on create, update and patch of the main resource.
 */

/** A stored object on the wire. */
export function toWire(obj: ApiObject<unknown, unknown>): KubeObject {
  const m = obj.metadata;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      generation: m.generation,
      creationTimestamp: m.creationTimestamp,
      ...(m.deletionTimestamp
        ? { deletionTimestamp: m.deletionTimestamp, deletionGracePeriodSeconds: 0 }
        : {}),
      ...(Object.keys(m.labels).length > 0 ? { labels: m.labels } : {}),
      ...(Object.keys(m.annotations).length > 0 ? { annotations: m.annotations } : {}),
      ...(m.ownerReferences.length > 0 ? { ownerReferences: m.ownerReferences } : {}),
      ...(m.finalizers.length > 0 ? { finalizers: m.finalizers } : {}),
    },
    spec: obj.spec,
    status: obj.status,
  };
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const OwnerReferenceSchema = z.object({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  name: z.string().min(1),
  uid: z.string().min(1),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});

/** What a client may send as an object. */
export const BodySchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z
    .looseObject({
      name: z.string().optional(),
      generateName: z.string().optional(),
      namespace: z.string().optional(),
      uid: z.string().optional(),
      resourceVersion: z.string().optional(),
      labels: z.record(z.string(), z.string()).nullish(),
      annotations: z.record(z.string(), z.string()).nullish(),
      ownerReferences: z.array(OwnerReferenceSchema).nullish(),
      finalizers: z.array(z.string()).nullish(),
    })
    .optional(),
  spec: z.unknown().optional(),
});
export type Body = z.infer<typeof BodySchema>;

/** Parse a body as an object of `r`, with Kubernetes' messages for the usual mistakes. */
export function parseBody(r: KubeResource, raw: unknown, where: { namespace: string; name?: string }): Body {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw badRequest('the request body must be a JSON or YAML object');
  const parsed = BodySchema.safeParse(raw);
  if (!parsed.success) {
    const name = where.name ?? '';
    throw invalid(
      r,
      name,
      parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
    );
  }
  const body = parsed.data;
  const expected = `${r.group}/${r.version}`;
  if (body.apiVersion !== undefined && body.apiVersion !== expected)
    throw badRequest(
      `the API version in the data (${body.apiVersion}) does not match the expected API version (${expected})`,
    );
  if (body.kind !== undefined && body.kind !== r.kind)
    throw badRequest(`the kind in the data (${body.kind}) does not match the expected kind (${r.kind})`);
  const ns = body.metadata?.namespace;
  if (ns !== undefined && ns !== '' && ns !== where.namespace)
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  const name = body.metadata?.name;
  if (where.name !== undefined && name !== undefined && name !== where.name)
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${where.name})`);
  return body;
}

/** Check a name (or generateName prefix) as Kubernetes does for CRDs: a DNS subdomain. */
export function nameProblems(name: string | undefined, generateName: string | undefined): string[] {
  if (!name && !generateName) return ['metadata.name: Required value: name or generateName is required'];
  if (name && (name.length > 253 || !DNS_SUBDOMAIN.test(name)))
    return [
      `metadata.name: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
    ];
  if (!name && generateName && !DNS_SUBDOMAIN.test(`${generateName}a`))
    return [`metadata.generateName: "${generateName}": not a valid name prefix`];
  return [];
}

/** The object to create from a body. */
export function newObject(r: KubeResource, body: Body, namespace: string): NewObject<unknown, unknown> {
  const m = body.metadata ?? {};
  return {
    apiVersion: `${r.group}/${r.version}`,
    kind: r.kind,
    metadata: {
      ...(m.name ? { name: m.name } : {}),
      ...(m.generateName ? { generateName: m.generateName } : {}),
      namespace,
      labels: m.labels ?? {},
      annotations: m.annotations ?? {},
      ownerReferences: m.ownerReferences ?? [],
      finalizers: m.finalizers ?? [],
    },
    spec: body.spec ?? {},
  };
}

/** The stored object with what a body may change applied (resourceVersion: the body's, or the stored one). */
export function updatedObject(stored: ApiObject<unknown, unknown>, body: Body): ApiObject<unknown, unknown> {
  const m = body.metadata ?? {};
  return {
    ...stored,
    metadata: {
      ...stored.metadata,
      resourceVersion: m.resourceVersion ?? stored.metadata.resourceVersion,
      labels: m.labels ?? {},
      annotations: m.annotations ?? {},
      ownerReferences: m.ownerReferences ?? [],
      finalizers: m.finalizers ?? [],
    },
    spec: body.spec ?? {},
  };
}
