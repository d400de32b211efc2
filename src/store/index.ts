export type * from './types.ts';
export { SqliteStore, type SqliteStoreOptions } from './sqlite/sqlite-store.ts';
export { PostgresStore, type PostgresStoreOptions } from './postgres/index.ts';
export { startFeedCompaction, type FeedCompactionOptions } from './feed-compaction.ts';
export { DelegatingStore } from './delegating-store.ts';
export { ForwardedWrites, answerWrite, type WriteAnswer, type WriteRequest } from './forwarded-writes.ts';
