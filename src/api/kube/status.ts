import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ConflictError,
  InputError,
  NotFoundError,
  UnprocessableError,
  type MagnetarError,
} from '../../domain/index.ts';
import { asMagnetarError, errorHandler, kubeStatusBody } from '../errors.ts';
import { qualifiedName, type KubeResource } from './resources.ts';

/**
 * Kubernetes-worded errors of the kube façade and their rendering as `Status` with the
 * `reason` and `details` (name, group, kind, causes) kubectl prints and client libraries
 * branch on. Codes that have no domain error class of their own (405, 410, 415) travel as the
 * error's `code`.
 */

/** One field problem of a 422. */
export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

const details = (r: KubeResource, name: string) => ({ name, group: r.group, kind: r.plural });

/** 404 for an object. */
export function notFound(r: KubeResource, name: string): NotFoundError {
  return new NotFoundError(`${qualifiedName(r)} "${name}" not found`, {
    code: 'NotFound',
    details: details(r, name),
  });
}

/** 409 AlreadyExists. */
export function alreadyExists(r: KubeResource, name: string): ConflictError {
  return new ConflictError(`${qualifiedName(r)} "${name}" already exists`, {
    code: 'AlreadyExists',
    details: details(r, name),
  });
}

/** 409 Conflict on a stale resourceVersion or a failed precondition. */
export function conflict(r: KubeResource, name: string, why?: string): ConflictError {
  return new ConflictError(
    `Operation cannot be fulfilled on ${qualifiedName(r)} "${name}": ${why ?? 'the object has been modified; please apply your changes to the latest version and try again'}`,
    { code: 'Conflict', details: details(r, name) },
  );
}

/** 422 Invalid with one cause per problem (`spec.x: message`). */
export function invalid(r: KubeResource, name: string, problems: string[]): UnprocessableError {
  const causes: StatusCause[] = problems.map((p) => {
    const i = p.indexOf(': ');
    return i > 0
      ? { reason: 'FieldValueInvalid', message: `Invalid value: ${p.slice(i + 2)}`, field: p.slice(0, i) }
      : { reason: 'FieldValueInvalid', message: p, field: '' };
  });
  return new UnprocessableError(
    `${r.kind}.${r.group} "${name}" is invalid: ${causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ')}`,
    { code: 'Invalid', details: { ...details(r, name), kind: r.kind, causes } },
  );
}

/** 400 BadRequest. */
export function badRequest(message: string): InputError {
  return new InputError(message, { code: 'BadRequest' });
}

/** 415 (a patch Content-Type that is not served). */
export function unsupportedMediaType(contentType: string): InputError {
  return new InputError(
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml (got ${contentType || 'none'})`,
    {
      code: 'UnsupportedMediaType',
    },
  );
}

/** 405 (a verb a resource does not serve). */
export function methodNotAllowed(
  message = 'the server does not allow this method on the requested resource',
): InputError {
  return new InputError(message, { code: 'MethodNotAllowed' });
}

const STATUS_BY_CODE: Record<string, number> = {
  Expired: 410,
  UnsupportedMediaType: 415,
  MethodNotAllowed: 405,
};
const REASON_BY_CODE: Record<string, string> = {
  AlreadyExists: 'AlreadyExists',
  Expired: 'Expired',
  Conflict: 'Conflict',
  Invalid: 'Invalid',
  Forbidden: 'Forbidden',
  Unauthorized: 'Unauthorized',
  UnsupportedMediaType: 'UnsupportedMediaType',
  MethodNotAllowed: 'MethodNotAllowed',
};

/** The HTTP status and `Status` body of a known error. */
export function statusOf(err: MagnetarError): { code: number; body: ReturnType<typeof kubeStatusBody> } {
  const code = STATUS_BY_CODE[err.code] ?? err.status;
  const d = err.details;
  const keep =
    d && (typeof d.name === 'string' || typeof d.kind === 'string' || Array.isArray(d.causes))
      ? Object.fromEntries(
          Object.entries(d).filter(([k]) => ['name', 'group', 'kind', 'uid', 'causes'].includes(k)),
        )
      : undefined;
  return { code, body: kubeStatusBody(code, err.message, REASON_BY_CODE[err.code], keep) };
}

const fallback = errorHandler('kube');

/** The façade's error handler: domain errors as `Status` with details; unexpected ones via the shared handler (500). */
export function kubeErrorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const known = asMagnetarError(err);
  if (!known) return fallback(err, req, reply);
  const { code, body } = statusOf(known);
  return reply.code(code).send(body);
}
