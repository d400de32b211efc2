import { readFileSync, existsSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigSchema, type Config } from '../domain/index.ts';

/** Raised when configuration is invalid; the message names every bad setting. */
export class ConfigError extends Error {}

type Json = Record<string, unknown>;

function setPath(target: Json, path: string[], value: unknown): void {
  let cur = target;
  for (const key of path.slice(0, -1)) {
    const next = cur[key];
    if (!next || typeof next !== 'object') cur[key] = {};
    cur = cur[key] as Json;
  }
  cur[path[path.length - 1]!] = value;
}

/** Environment variables understood, and where they go. */
export const ENV_SETTINGS: Record<string, { path: string[]; type: 'string' | 'number' }> = {
  MAGNETAR_HOST: { path: ['host'], type: 'string' },
  MAGNETAR_PORT: { path: ['port'], type: 'number' },
  MAGNETAR_PUBLIC_URL: { path: ['publicUrl'], type: 'string' },
  MAGNETAR_DATA_DIR: { path: ['dataDir'], type: 'string' },
  MAGNETAR_REGION: { path: ['region'], type: 'string' },
  MAGNETAR_ROLE: { path: ['role'], type: 'string' },
  MAGNETAR_STORE_ENGINE: { path: ['store', 'engine'], type: 'string' },
  MAGNETAR_STORE_URL: { path: ['store', 'url'], type: 'string' },
  MAGNETAR_IDENTITY_MODE: { path: ['identity', 'mode'], type: 'string' },
  MAGNETAR_KEYSTONE_URL: { path: ['identity', 'keystoneUrl'], type: 'string' },
  MAGNETAR_CLOUD_MODE: { path: ['cloud', 'mode'], type: 'string' },
  MAGNETAR_CLOUDS_YAML: { path: ['cloud', 'cloudsYaml'], type: 'string' },
  MAGNETAR_CLOUD_NAME: { path: ['cloud', 'cloudName'], type: 'string' },
  MAGNETAR_CLOUD_LATENCY_MS: { path: ['cloud', 'simulatedLatencyMs'], type: 'number' },
  MAGNETAR_LOG_LEVEL: { path: ['logLevel'], type: 'string' },
};

/**
 * Build the configuration from a YAML file, then the environment, then explicit overrides
 * (flags). Throws ConfigError naming each bad setting.
 */
export function loadConfig(
  options: { file?: string; env?: NodeJS.ProcessEnv; overrides?: Json } = {},
): Config {
  const env = options.env ?? process.env;
  let raw: Json = {};
  const file = options.file ?? env.MAGNETAR_CONFIG;
  if (file) {
    if (!existsSync(file)) throw new ConfigError(`config file ${file} does not exist`);
    const parsed: unknown = parseYaml(readFileSync(file, 'utf8'));
    if (parsed !== null && parsed !== undefined) {
      if (typeof parsed !== 'object' || Array.isArray(parsed))
        throw new ConfigError(`config file ${file}: expected a mapping`);
      raw = parsed as Json;
    }
  }
  for (const [name, setting] of Object.entries(ENV_SETTINGS)) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    if (setting.type === 'number') {
      const n = Number(v);
      if (!Number.isFinite(n)) throw new ConfigError(`${name}: expected a number, got "${v}"`);
      setPath(raw, setting.path, n);
    } else setPath(raw, setting.path, v);
  }
  for (const [k, v] of Object.entries(options.overrides ?? {})) {
    if (v !== undefined) setPath(raw, k.split('.'), v);
  }
  const result = ConfigSchema.safeParse(raw);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return result.data;
}

/** Defaults for tests: in-memory SQLite, ephemeral port, no latency, quiet. */
export function testConfig(overrides: Partial<z.input<typeof ConfigSchema>> = {}): Config {
  return ConfigSchema.parse({
    port: 0,
    dataDir: './data/test',
    store: { engine: 'sqlite', url: ':memory:' },
    cloud: { mode: 'embedded', simulatedLatencyMs: 0 },
    logLevel: 'silent',
    ...overrides,
  });
}
