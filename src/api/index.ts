export { buildServer, type MountedPlugin, type ServerOptions } from './server.ts';
export * from './errors.ts';
