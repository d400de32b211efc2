import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  InputError,
  parseFieldSelector,
  parseLabelSelector,
  type AuthContext,
  type Clock,
  type FieldSelector,
  type IdentityProvider,
  type IncludeObject,
  type LabelSelector,
  type OperatorPolicy,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { authenticate } from './access.ts';
import { findResource, type KubeResource } from './resources.ts';
import { notFoundStatus } from './not-found.ts';

/** What the kube façade needs. */
export interface KubeRoutesDeps {
  store: ObjectStore;
  identity: IdentityProvider;
  clock: Clock;
  /** Public base URL of the server (the kube API is at `<base>/k8s`). */
  baseUrl: () => string;
  /**
   * Where kubectl reaches this API and the CA to trust, for the kubeconfigs it hands out
   * (e.g. a TLS front when the server itself speaks plain HTTP). @default `<base>/k8s`, system CAs
   */
  endpoint?: () => { server: string; caPem?: string };
  /**
   * The operator's rules (workers per node group, odd masters) applied to replicas written
   * through kubectl. @default defaultPolicy
   */
  policy?: OperatorPolicy;
}

/** Query parameters of list, watch and write requests. */
const QuerySchema = z.looseObject({
  labelSelector: z.string().optional(),
  fieldSelector: z.string().optional(),
  limit: z.string().regex(/^\d+$/, 'limit must be a non-negative integer').optional(),
  continue: z.string().optional(),
  watch: z.string().optional(),
  resourceVersion: z.string().optional(),
  timeoutSeconds: z.string().regex(/^\d+$/, 'timeoutSeconds must be a non-negative integer').optional(),
  includeObject: z.enum(['None', 'Metadata', 'Object']).optional(),
  dryRun: z.union([z.string(), z.array(z.string())]).optional(),
  fieldManager: z.string().optional(),
  force: z.string().optional(),
});

/** A parsed query. */
export interface KubeQuery {
  labelSelector: LabelSelector | undefined;
  fieldSelector: FieldSelector;
  limit: number | undefined;
  continue: string | undefined;
  watch: boolean;
  resourceVersion: string | undefined;
  timeoutSeconds: number | undefined;
  includeObject: IncludeObject | undefined;
  dryRun: boolean;
  fieldManager: string | undefined;
}

/** Parse the query of a request for resource `r` (400 on malformed selectors and numbers). */
export function parseQuery(req: FastifyRequest, r?: KubeResource): KubeQuery {
  const parsed = QuerySchema.safeParse(req.query ?? {});
  if (!parsed.success)
    throw new InputError(parsed.error.issues.map((i) => i.message).join('; '), { code: 'BadRequest' });
  const q = parsed.data;
  const watch = q.watch === '1' || q.watch === 'true';
  return {
    labelSelector: q.labelSelector ? parseLabelSelector(q.labelSelector) : undefined,
    fieldSelector: parseFieldSelector(q.fieldSelector, r?.fields ?? []),
    limit: q.limit === undefined ? undefined : Number(q.limit),
    continue: q.continue || undefined,
    watch,
    resourceVersion: q.resourceVersion,
    timeoutSeconds: q.timeoutSeconds === undefined ? undefined : Number(q.timeoutSeconds),
    includeObject: q.includeObject,
    dryRun: q.dryRun !== undefined && (Array.isArray(q.dryRun) ? q.dryRun.length > 0 : q.dryRun !== ''),
    fieldManager: q.fieldManager,
  };
}

/** Route parameters of the resource routes. */
export interface ResourceParams {
  group: string;
  version: string;
  plural: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** The resource a request names; 404 (as Kubernetes answers unknown resources) otherwise. */
export function resourceOf(p: ResourceParams): KubeResource {
  const r = findResource(p.group, p.version, p.plural);
  if (!r) throw notFoundStatus();
  return r;
}

/** The authenticated caller. */
export function caller(deps: KubeRoutesDeps, req: FastifyRequest): Promise<AuthContext> {
  return authenticate(deps.identity, req);
}
