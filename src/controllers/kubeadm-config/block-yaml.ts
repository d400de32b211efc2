/**
 * YAML for cloud-config user data: plain data (maps, lists, strings, booleans, numbers) in
 * block style, multi-line text as literal blocks, so certificates and configuration files read
 * as they will be written. Every machine's bootstrap data goes through here when a region
 * builds many clusters at once; a general YAML library's analysis of each string cost more
 * than the rest of rendering together. Anything that is not plainly safe is written
 * double-quoted, as JSON writes it (valid YAML 1.1 and 1.2 alike), so any string round-trips.
 */

/** Words YAML 1.1 (cloud-init's parser) reads as booleans or null when left unquoted. */
const SPECIAL_WORDS = new Set(['y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null']);

/** A string written without quotes: a path, a name, an owner — nothing YAML reads otherwise. */
function plainSafe(s: string): boolean {
  return (
    /^[A-Za-z/_][\w/.:@=+,-]*$/.test(s) &&
    !s.endsWith(':') &&
    !s.includes('://') &&
    !SPECIAL_WORDS.has(s.toLowerCase())
  );
}

/** Text a literal block keeps exactly: printable ASCII lines, the first one not indented. */
function literalSafe(s: string): boolean {
  return s.includes('\n') && /^[\x20-\x7e\n]*$/.test(s) && /^[^\s]/.test(s);
}

/** Double-quoted, escaping what JSON leaves raw but YAML does not allow or reads as a break. */
function quoted(s: string): string {
  return JSON.stringify(s).replace(
    /[\u007f-\u009f\u2028\u2029\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function scalar(value: unknown, indent: string): string {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') throw new TypeError(`cannot write ${typeof value} as cloud-config`);
  if (plainSafe(value)) return value;
  if (!literalSafe(value)) return quoted(value);
  const trailing = value.length - value.replace(/\n+$/, '').length;
  const chomp = trailing === 0 ? '-' : trailing === 1 ? '' : '+';
  const lines = (trailing > 0 ? value.slice(0, -1) : value).split('\n');
  return `|${chomp}\n${lines.map((l) => (l === '' ? '' : `${indent}  ${l}`)).join('\n')}`;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function key(k: string): string {
  return /^[A-Za-z_][\w-]*$/.test(k) && !SPECIAL_WORDS.has(k.toLowerCase()) ? k : quoted(k);
}

/** The lines of a map at `indent`; `first` replaces the indentation of its first line ("- "). */
function mapLines(map: Record<string, unknown>, indent: string, first = indent): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(map)) {
    if (v === undefined) continue;
    const lead = out.length === 0 ? first : indent;
    if (Array.isArray(v)) {
      if (v.length === 0) out.push(`${lead}${key(k)}: []`);
      else out.push(`${lead}${key(k)}:`, ...listLines(v, `${indent}  `));
    } else if (isMap(v)) {
      if (Object.keys(v).length === 0) out.push(`${lead}${key(k)}: {}`);
      else out.push(`${lead}${key(k)}:`, ...mapLines(v, `${indent}  `));
    } else {
      out.push(`${lead}${key(k)}: ${scalar(v, indent)}`);
    }
  }
  return out;
}

function listLines(list: unknown[], indent: string): string[] {
  const out: string[] = [];
  for (const item of list) {
    if (isMap(item) && Object.keys(item).length > 0)
      out.push(...mapLines(item, `${indent}  `, `${indent}- `));
    else if (Array.isArray(item) && item.length > 0)
      out.push(`${indent}-`, ...listLines(item, `${indent}  `));
    else if (Array.isArray(item)) out.push(`${indent}- []`);
    else if (isMap(item)) out.push(`${indent}- {}`);
    else out.push(`${indent}- ${scalar(item, indent)}`);
  }
  return out;
}

/** A YAML document of `map` in block style, ending with a newline. */
export function blockYaml(map: Record<string, unknown>): string {
  return `${mapLines(map, '').join('\n')}\n`;
}
