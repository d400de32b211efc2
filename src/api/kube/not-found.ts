import { NotFoundError } from '../../domain/index.ts';

/** The 404 Kubernetes answers for a path it does not serve (no details). */
export function notFoundStatus(): NotFoundError {
  return new NotFoundError('the server could not find the requested resource', { code: 'NotFound' });
}
