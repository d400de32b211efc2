export type * from './types.ts';
export { SqliteStore, type SqliteStoreOptions } from './sqlite/sqlite-store.ts';
