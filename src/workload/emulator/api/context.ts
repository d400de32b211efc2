import type { IncomingMessage, ServerResponse } from 'node:http';
import { NotAllowedError } from '../../../domain/index.ts';
import type { ClusterView } from './cluster-view.ts';
import type { Caller } from './http-io.ts';

/** One request being served. */
export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  method: string;
  view: ClusterView;
  caller: Caller;
}

/** 405 for verbs a resource does not support. */
export function methodNotAllowed(ctx: RequestContext, what: string): NotAllowedError {
  return new NotAllowedError(
    `the server does not allow this method on the requested resource (${ctx.method} ${what})`,
    { code: 'MethodNotAllowed' },
  );
}

/** The verb of a request, in RBAC terms. */
export function verbOf(method: string, collection: boolean, watch: boolean): string {
  switch (method) {
    case 'GET':
      return collection ? (watch ? 'watch' : 'list') : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return collection ? 'deletecollection' : 'delete';
    default:
      return method.toLowerCase();
  }
}
