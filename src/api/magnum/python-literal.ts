import { InputError } from '../../domain/index.ts';

/**
 * A parser for the Python literals Magnum reads with `ast.literal_eval`: the
 * `openstack coe ... update ... labels=...` command sends `str(dict)` (e.g.
 * `{'kube_tag': 'v1.27.3'}`) instead of JSON. Supported: dicts, lists, tuples, strings in
 * both quote styles (with `u`/`r`/`b` prefixes, escapes, adjacent-literal concatenation),
 * ints (decimal, hex, octal, binary, `_` separators), floats, signs, True/False/None.
 * Anything else (names, calls, sets, complex numbers) is refused, as `literal_eval` does.
 */

/** A dict literal: keys may be any literal, in source order (a repeated key keeps the last value). */
export class PyDict {
  constructor(readonly entries: [PyValue, PyValue][]) {}
}

/** A parsed Python literal. Tuples become arrays. */
export type PyValue = string | number | boolean | null | PyValue[] | PyDict;

/** Thrown for malformed literals; `position` is the character offset. */
export class PyLiteralError extends InputError {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`, { code: 'MalformedLiteral' });
  }
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  parse(): PyValue {
    this.ws();
    const v = this.value();
    this.ws();
    if (this.i < this.s.length) this.fail(`unexpected "${this.s[this.i]}" after the value`);
    return v;
  }

  private fail(message: string): never {
    throw new PyLiteralError(message, this.i);
  }

  private ws(): void {
    while (this.i < this.s.length) {
      const c = this.s[this.i]!;
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') this.i++;
      else if (c === '\\' && this.s[this.i + 1] === '\n') this.i += 2;
      else break;
    }
  }

  private value(): PyValue {
    const c = this.s[this.i];
    if (c === undefined) this.fail('unexpected end of input');
    if (c === '{') return this.dict();
    if (c === '[') return this.sequence('[', ']');
    if (c === '(') return this.sequence('(', ')');
    if (c === "'" || c === '"') return this.strings();
    if (c === '-' || c === '+') {
      this.i++;
      this.ws();
      const n = this.value();
      if (typeof n !== 'number') this.fail('a sign must be followed by a number');
      return c === '-' ? -n : n;
    }
    if ((c >= '0' && c <= '9') || (c === '.' && /[0-9]/.test(this.s[this.i + 1] ?? ''))) return this.number();
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.i))?.[0];
    if (word !== undefined) {
      const after = this.s[this.i + word.length];
      if (/^[rRuUbB]{1,2}$/.test(word) && (after === "'" || after === '"')) return this.strings();
      this.i += word.length;
      if (word === 'True') return true;
      if (word === 'False') return false;
      if (word === 'None') return null;
      this.i -= word.length;
      this.fail(
        `"${word}" is not a literal (only strings, numbers, True, False, None, dicts, lists and tuples are)`,
      );
    }
    this.fail(`unexpected "${c}"`);
  }

  private dict(): PyDict {
    this.i++; // {
    const entries: [PyValue, PyValue][] = [];
    this.ws();
    while (this.s[this.i] !== '}') {
      const key = this.value();
      if (Array.isArray(key) || key instanceof PyDict)
        this.fail('a dict key must be a string, number, bool or None');
      this.ws();
      if (this.s[this.i] !== ':')
        this.fail(
          this.s[this.i] === ',' || this.s[this.i] === '}'
            ? 'sets are not supported; expected ":"'
            : 'expected ":"',
        );
      this.i++;
      this.ws();
      const value = this.value();
      const existing = entries.findIndex(([k]) => k === key);
      if (existing >= 0) entries.splice(existing, 1);
      entries.push([key, value]);
      this.ws();
      if (this.s[this.i] === ',') {
        this.i++;
        this.ws();
      } else if (this.s[this.i] !== '}') this.fail('expected "," or "}"');
    }
    this.i++; // }
    return new PyDict(entries);
  }

  private sequence(open: string, close: string): PyValue {
    this.i++;
    const items: PyValue[] = [];
    this.ws();
    let sawComma = false;
    while (this.s[this.i] !== close) {
      items.push(this.value());
      this.ws();
      if (this.s[this.i] === ',') {
        sawComma = true;
        this.i++;
        this.ws();
      } else if (this.s[this.i] !== close) this.fail(`expected "," or "${close}"`);
    }
    this.i++;
    // `(x)` is just x in Python; a tuple needs a comma or must be empty.
    if (open === '(' && items.length === 1 && !sawComma) return items[0]!;
    return items;
  }

  /** One or more adjacent string literals, concatenated. */
  private strings(): string {
    let out = this.string();
    for (;;) {
      const save = this.i;
      this.ws();
      const c = this.s[this.i];
      const prefixed = /^[rRuUbB]{1,2}['"]/.test(this.s.slice(this.i, this.i + 3));
      if (c === "'" || c === '"' || prefixed) out += this.string();
      else {
        this.i = save;
        return out;
      }
    }
  }

  private string(): string {
    let raw = false;
    while (/[rRuUbB]/.test(this.s[this.i] ?? '')) {
      if (this.s[this.i] === 'r' || this.s[this.i] === 'R') raw = true;
      this.i++;
    }
    const q = this.s[this.i]!;
    const triple = this.s.slice(this.i, this.i + 3) === q.repeat(3);
    const start = this.i;
    this.i += triple ? 3 : 1;
    let out = '';
    for (;;) {
      if (this.i >= this.s.length) {
        this.i = start;
        this.fail('unterminated string');
      }
      const c = this.s[this.i]!;
      if (triple ? this.s.slice(this.i, this.i + 3) === q.repeat(3) : c === q) {
        this.i += triple ? 3 : 1;
        return out;
      }
      if (!triple && c === '\n') this.fail('newline inside a string');
      if (c !== '\\') {
        out += c;
        this.i++;
        continue;
      }
      const n = this.s[this.i + 1];
      if (n === undefined) this.fail('unterminated string');
      if (raw) {
        out += c + n;
        this.i += 2;
        continue;
      }
      this.i += 2;
      if (n === '\n') continue;
      const simple = SIMPLE_ESCAPES[n];
      if (simple !== undefined) {
        out += simple;
      } else if (n >= '0' && n <= '7') {
        let digits = n;
        while (digits.length < 3 && /[0-7]/.test(this.s[this.i] ?? '')) digits += this.s[this.i++];
        out += String.fromCodePoint(parseInt(digits, 8));
      } else if (n === 'x' || n === 'u' || n === 'U') {
        const len = n === 'x' ? 2 : n === 'u' ? 4 : 8;
        const hex = this.s.slice(this.i, this.i + len);
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) this.fail(`truncated \\${n} escape`);
        const cp = parseInt(hex, 16);
        if (cp > 0x10ffff) this.fail(`\\${n} escape out of range`);
        out += String.fromCodePoint(cp);
        this.i += len;
      } else if (n === 'N') {
        this.fail('\\N{...} escapes are not supported');
      } else {
        out += '\\' + n; // Python keeps unknown escapes as they are
      }
    }
  }

  private number(): number {
    const rest = this.s.slice(this.i);
    const m =
      /^0[xX](?:_?[0-9a-fA-F])+/.exec(rest) ??
      /^0[oO](?:_?[0-7])+/.exec(rest) ??
      /^0[bB](?:_?[01])+/.exec(rest) ??
      /^(?:\d(?:_?\d)*)?(?:\.(?:\d(?:_?\d)*)?)?(?:[eE][+-]?\d(?:_?\d)*)?/.exec(rest);
    const text = m?.[0] ?? '';
    if (text === '' || text === '.') this.fail('malformed number');
    const after = this.s[this.i + text.length];
    if (after !== undefined && /[A-Za-z0-9_.]/.test(after)) {
      this.fail(after === 'j' || after === 'J' ? 'complex numbers are not supported' : 'malformed number');
    }
    this.i += text.length;
    const clean = text.replace(/_/g, '');
    if (/^0[xX]/.test(clean)) return parseInt(clean.slice(2), 16);
    if (/^0[oO]/.test(clean)) return parseInt(clean.slice(2), 8);
    if (/^0[bB]/.test(clean)) return parseInt(clean.slice(2), 2);
    if (/^\d+$/.test(clean) && clean.length > 1 && clean.startsWith('0') && /[1-9]/.test(clean)) {
      this.i -= text.length;
      this.fail('leading zeros in a decimal integer are not permitted');
    }
    return Number(clean);
  }
}

/** Parse one Python literal; PyLiteralError (a 400 InputError) when malformed. */
export function parsePythonLiteral(text: string): PyValue {
  return new Parser(text).parse();
}

/** Python's `str()` of a scalar, as Magnum stores label values. */
export function pyScalarString(v: string | number | boolean | null): string {
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return String(v);
  return v;
}

/**
 * A `dict[str, scalar]` (labels, health_status_reason) from a parsed literal or JSON value;
 * scalar values become strings as Magnum stores them. InputError naming `field` otherwise.
 */
export function toStringDict(value: unknown, field: string): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (k: unknown, v: unknown) => {
    if (typeof k !== 'string')
      throw new InputError(`${field} keys must be strings; got ${JSON.stringify(k)}.`, { code: 'Invalid' });
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) {
      out[k] = pyScalarString(v as string | number | boolean | null);
    } else
      throw new InputError(`${field} values must be strings, numbers or booleans; "${k}" is not.`, {
        code: 'Invalid',
      });
  };
  if (value instanceof PyDict) {
    for (const [k, v] of value.entries) put(k, v);
    return out;
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) put(k, v);
    return out;
  }
  throw new InputError(`${field} must be a dictionary of key/value pairs.`, { code: 'Invalid' });
}

/** A parsed literal as plain JSON (dicts become objects with string keys); InputError for non-string keys. */
export function pyToJson(v: PyValue): unknown {
  if (v instanceof PyDict) {
    const o: Record<string, unknown> = {};
    for (const [k, val] of v.entries) {
      if (typeof k !== 'string')
        throw new InputError(`dictionary keys must be strings; got ${JSON.stringify(k)}.`, {
          code: 'Invalid',
        });
      o[k] = pyToJson(val);
    }
    return o;
  }
  if (Array.isArray(v)) return v.map(pyToJson);
  return v;
}
