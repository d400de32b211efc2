/**
 * Python's `repr()` of JSON values. The `openstack` client prints dicts, lists, booleans and
 * nulls in tables the way Python prints them (`{'k': 'v'}`, `True`, `None`), and it sends label
 * values in PATCH bodies as `str(dict)`; `coe` does the same so output and requests match.
 */

/** Python `repr()` of a string: single quotes unless the text has `'` and no `"`. */
export function pyStringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

/** Python `repr()` of a JSON value (`None`, `True`, `{'a': 1}`, `['x']`). */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return pyStringRepr(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyFloat(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([k, v]) => `${pyStringRepr(k)}: ${pyRepr(v)}`).join(', ')}}`;
  }
  return typeof value === 'bigint' ? value.toString() : 'None';
}

/** Python `str()`: strings as they are, everything else as `repr()`. */
export function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

function pyFloat(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  return String(n);
}
