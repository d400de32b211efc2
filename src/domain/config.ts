import { z } from 'zod';

/**
 * Magnetar's configuration: one typed object, read from a YAML file (`--config` or
 * `MAGNETAR_CONFIG`), then environment variables, then flags; validated at start with
 * errors that name the bad setting. Every option documents its default.
 */
export const ConfigSchema = z
  .object({
    /** Address to listen on. @default 127.0.0.1 */
    host: z.string().default('127.0.0.1'),
    /** Port of the single HTTP listener (Magnum API, identity, kube API, dashboard, embedded cloud). @default 9511 */
    port: z.number().int().min(0).max(65535).default(9511),
    /** Base URL clients use to reach this server; derived from host/port when absent. */
    publicUrl: z.string().url().optional(),
    /** Directory for the SQLite file, keys, generated clouds.yaml and openrc files. @default ./data */
    dataDir: z.string().default('./data'),
    /** Region name in the catalog. @default RegionOne */
    region: z.string().default('RegionOne'),
    /** Which parts run in this process. @default all */
    role: z.enum(['all', 'api', 'controllers']).default('all'),
    store: z
      .object({
        engine: z.enum(['sqlite', 'postgres']).default('sqlite'),
        /** SQLite file (relative to dataDir) or PostgreSQL connection URL. */
        url: z.string().optional(),
      })
      .default({ engine: 'sqlite' }),
    identity: z
      .object({
        /** `local`: Magnetar's own Keystone-compatible identity; `keystone`: validate against an external Keystone. */
        mode: z.enum(['local', 'keystone']).default('local'),
        /** Token lifetime in seconds. @default 3600 */
        tokenTtlSeconds: z.number().int().positive().default(3600),
        /** External Keystone URL (mode `keystone`). */
        keystoneUrl: z.string().url().optional(),
        /**
         * Mode `keystone`: register the Magnum API (`container-infra`) in the external Keystone's
         * catalog at start, idempotently (needs the admin role). @default true
         */
        registerCatalog: z.boolean().optional(),
      })
      .default({ mode: 'local', tokenTtlSeconds: 3600 }),
    cloud: z
      .object({
        /** `embedded`: serve and use the embedded cloud under /cloud; `external`: use a real cloud from clouds.yaml. */
        mode: z.enum(['embedded', 'external']).default('embedded'),
        /** clouds.yaml path for `external`. */
        cloudsYaml: z.string().optional(),
        /** Entry in clouds.yaml. @default magnetar */
        cloudName: z.string().default('magnetar'),
        /**
         * Emulate the workload clusters' Kubernetes APIs (docs/workload-emulation.md). Needed when
         * the servers run no guest: the embedded cloud, or an external cloud whose Nova uses the
         * fake driver. @default true for `embedded`, false for `external`
         */
        emulateWorkload: z.boolean().optional(),
        /** Simulated latency of the embedded cloud's asynchronous transitions, in milliseconds. @default 3000 */
        simulatedLatencyMs: z.number().int().min(0).default(3000),
        /**
         * Run the embedded cloud on a thread of its own, with its own store
         * (docs/adr/0013-embedded-cloud-thread.md). Needs a store file or PostgreSQL and local
         * identity; otherwise, and with `false`, it runs on the main thread. @default true
         */
        thread: z.boolean().optional(),
      })
      .default({ mode: 'embedded', cloudName: 'magnetar', simulatedLatencyMs: 3000 }),
    controllers: z
      .object({
        /** Concurrent reconciles per controller. @default 4 */
        workers: z.number().int().positive().default(4),
        /**
         * Periodic resync of every object, seconds: Cluster API's `--sync-period` default. Above
         * a hundred keys per controller, a resync is spread over the first half of the period.
         * @default 600
         */
        resyncSeconds: z.number().int().positive().default(600),
        /** Lease time-to-live for multi-process operation, seconds. @default 15 */
        leaseTtlSeconds: z.number().int().positive().default(15),
      })
      .default({ workers: 4, resyncSeconds: 600, leaseTtlSeconds: 15 }),
    /** Maximum request body size in bytes. @default 1048576 */
    bodyLimitBytes: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
    /** Log level. @default info */
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;
