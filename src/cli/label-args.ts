import { pyRepr } from './py-repr.ts';
import { UsageError } from './coe-errors.ts';

/**
 * Command-line argument parsing shared with the `openstack coe` client: `--labels` values and
 * the `<op> <path=value>...` arguments of the update commands.
 */

/**
 * Turn the values of repeated `--labels` options into a label map, exactly as the real client:
 * - a single `--labels` holding more than one `=` is split on `,` and `;`
 *   (`--labels a=1,b=2;c=3`), while several `--labels` are taken as they are
 *   (`--labels a=1,b=2 --labels c=3` gives `{a: '1,b=2', c: '3'}`);
 * - each item is split at its first `=`; an item without `=` is a usage error;
 * - a repeated key joins its values with `,`.
 */
export function parseLabels(values: readonly string[] | undefined): Record<string, string> {
  if (!values || values.length === 0) return {};
  let items: readonly string[] = values;
  if (values.length === 1 && countChar(values[0]!, '=') > 1) items = values[0]!.replace(/;/g, ',').split(',');
  const labels: Record<string, string> = {};
  for (const item of items) {
    const at = item.indexOf('=');
    if (at < 0) throw new UsageError(`labels must be a list of KEY=VALUE not ${item}`);
    const key = item.slice(0, at);
    const value = item.slice(at + 1);
    labels[key] = Object.hasOwn(labels, key) ? `${labels[key]},${value}` : value;
  }
  return labels;
}

/** A JSON-Patch operation as Magnum's PATCH endpoints take it. */
export type PatchOp =
  { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/** The operations the update commands accept. */
export type PatchVerb = PatchOp['op'];
export const PATCH_VERBS: readonly PatchVerb[] = ['add', 'replace', 'remove'];

/** Paths whose value Magnum parses as a Python dict literal rather than JSON. */
const DICT_LITERAL_PATHS = new Set(['/labels', '/health_status_reason']);

/**
 * Build the JSON-Patch list of `update` commands from `path=value` arguments, like the real client:
 * a missing leading `/` is added; values are JSON-decoded when they parse (`20` → 20,
 * `true` → true) and kept as strings otherwise; `/labels` and `/health_status_reason` values are
 * parsed as `--labels` and sent as a Python dict literal (`"{'a': '1'}"`), which is what Magnum
 * expects; `remove` needs only the path.
 */
export function argsToPatch(op: PatchVerb, attributes: readonly string[]): PatchOp[] {
  return attributes.map((raw) => {
    const attr = raw.startsWith('/') ? raw : `/${raw}`;
    switch (op) {
      case 'remove':
        return { op, path: attr.split('=', 1)[0]! };
      case 'add':
      case 'replace': {
        const at = attr.indexOf('=');
        if (at < 0) throw new UsageError(`Attributes must be a list of PATH=VALUE not "${attr}"`);
        const path = attr.slice(0, at);
        const text = attr.slice(at + 1);
        const value = DICT_LITERAL_PATHS.has(path) ? pyRepr(parseLabels([text])) : jsonOrString(text);
        return { op, path, value };
      }
    }
  });
}

function jsonOrString(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function countChar(s: string, ch: string): number {
  let n = 0;
  for (const c of s) if (c === ch) n++;
  return n;
}
