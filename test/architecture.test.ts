import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';

/**
 * The layer rules of ARCHITECTURE.md §2, checked on every import under src/:
 * which top-level folder may import which, and that a folder is entered only through its index.ts.
 */
const SRC = resolve(import.meta.dirname, '..', 'src');

const ALLOWED: Record<string, string[]> = {
  domain: [],
  store: ['domain'],
  identity: ['domain', 'store'],
  cloud: ['domain'],
  cloudsim: ['domain', 'store'],
  workload: ['domain', 'store'],
  controllers: ['domain', 'store', 'cloud', 'workload'],
  api: ['domain', 'store', 'identity', 'workload'],
  web: ['domain'],
  cli: ['domain', 'cloud'],
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function layerOf(file: string): string {
  const rel = relative(SRC, file).split(sep);
  return rel.length === 1 ? '(root)' : rel[0]!;
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

test('every src import follows the layer rules of ARCHITECTURE.md §2', () => {
  const violations: string[] = [];
  for (const file of files(SRC)) {
    const from = layerOf(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2]!;
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec);
      const to = layerOf(target);
      if (to === from) continue;
      const where = `${relative(SRC, file)} imports ${spec}`;
      if (from === '(root)') continue; // main.ts wires everything
      if (from === 'cli' && to === '(root)' && file.endsWith(`${sep}magnetar.ts`)) continue; // the server command starts main
      if (!(ALLOWED[from] ?? []).includes(to)) {
        violations.push(`${where}: layer ${from} may not depend on ${to}`);
        continue;
      }
      const rel = relative(join(SRC, to), target).split(sep);
      if (!(rel.length === 1 && rel[0] === 'index.ts'))
        violations.push(`${where}: enter ${to}/ through its index.ts`);
    }
  }
  assert.deepEqual(violations, []);
});

test('controllers and the API never import the embedded cloud', () => {
  assert.ok(!ALLOWED.controllers!.includes('cloudsim'));
  assert.ok(!ALLOWED.api!.includes('cloudsim'));
});
