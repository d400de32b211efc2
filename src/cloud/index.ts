/**
 * OpenStack client library: clouds.yaml configuration, a Keystone v3 session with retries
 * and deadlines, and one narrow typed client per service.
 */
export * from './cloud-error.ts';
export * from './clouds-config.ts';
export {
  findEndpoint,
  substituteProjectId,
  serviceTypeCandidates,
  SERVICE_TYPE_ALIASES,
  type Catalog,
} from './catalog.ts';
export { buildUrl, type Query, type ResponseType } from './http-answer.ts';
export {
  Session,
  type SessionOptions,
  type RequestOptions,
  type CloudResponse,
  type RetryEvent,
} from './session.ts';
export * from './compute-client.ts';
export * from './network-types.ts';
export * from './network-client.ts';
export * from './load-balancer-types.ts';
export * from './load-balancer-client.ts';
export * from './volume-client.ts';
export * from './image-client.ts';
export * from './object-store-client.ts';
export * from './clients.ts';
export * from './cloud-lookup.ts';
