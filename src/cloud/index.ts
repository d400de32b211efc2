/**
 * OpenStack client library: clouds.yaml configuration, a Keystone v3 session with retries
 * and deadlines, and one narrow typed client per service.
 */
export * from './cloud-error.ts';
export * from './clouds-config.ts';
export * from './catalog.ts';
export * from './session.ts';
