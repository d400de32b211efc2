/**
 * The Magnum v1 API façade (public face of `src/api/magnum`): mount `magnumRoutes(deps)` with
 * prefix '' and call `seedPublicTemplates` after identity bootstrap.
 */
export { magnumRoutes } from './plugin.ts';
export type { MagnumApiDeps } from './context.ts';
export { seedPublicTemplates, DEFAULT_KUBE_TAGS, type SeedTemplatesOptions } from './seed.ts';
export { MAX_VERSION as MAGNUM_MAX_VERSION, MIN_VERSION as MAGNUM_MIN_VERSION } from './microversion.ts';
