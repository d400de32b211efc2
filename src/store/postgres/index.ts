export { PostgresStore, type PostgresStoreOptions } from './postgres-store.ts';
