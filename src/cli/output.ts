import { Option, type Command } from 'commander';
import { stringify as toYaml } from 'yaml';
import { pyStr } from './py-repr.ts';
import { renderTable, type Align } from './table.ts';
import { UsageError } from './coe-errors.ts';

/**
 * Output of data-printing commands, in the `openstack` client's formats: `table` (default; list →
 * one column per field, show → Field/Value rows), `json`, `yaml` and `value`, with `-c` to pick
 * columns.
 */

/** Where text goes. */
export interface TextSink {
  write(chunk: string): unknown;
}

/** Output formats. */
export type OutputFormat = 'table' | 'json' | 'yaml' | 'value';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'json', 'yaml', 'value'];

/** The output options as commander parses them. */
export interface OutputOptions {
  /** @default 'table' */
  format?: OutputFormat;
  /** Columns to print (in the command's order, as the openstack client does). @default all */
  column?: string[];
  /** JSON without indentation. @default false */
  noindent?: boolean;
}

/** How null values print in `table` and `value` output. `json` and `yaml` always give `null`. */
export interface CellStyle {
  /** @default 'None' */
  none?: string;
  /** Right-align number columns of list tables (the `openstack` lister does). @default true */
  alignNumbers?: boolean;
  /** Header row of show tables. @default ['Field', 'Value'] */
  showHeaders?: readonly [string, string];
}

/** Add `-f/--format`, `-c/--column` and `--noindent` to a command that prints data. */
export function addOutputOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('-f, --format <format>', 'output format')
        .choices(OUTPUT_FORMATS as OutputFormat[])
        .default('table'),
    )
    .addOption(
      new Option(
        '-c, --column <column>',
        "print only this column (repeatable; columns keep the command's order)",
      ).argParser(collect),
    )
    .option('--noindent', 'print JSON on one line');
}

/** Commander argument parser that collects repeated option values into an array. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

// Like the openstack client, -c selects columns but keeps the command's order, so scripts
// written for `openstack coe ... -f value -c a -c b` read the same fields from `coe`.
function pickColumns(all: readonly string[], wanted: readonly string[] | undefined): number[] {
  if (!wanted || wanted.length === 0) return all.map((_, i) => i);
  for (const c of wanted) {
    if (!all.includes(c)) throw new UsageError(`unknown column '${c}'; columns are: ${all.join(', ')}`);
  }
  return all.flatMap((c, i) => (wanted.includes(c) ? [i] : []));
}

function cell(value: unknown, style: CellStyle): string {
  if (value === null || value === undefined) return style.none ?? 'None';
  return pyStr(value);
}

function jsonValue(value: unknown): unknown {
  return value === undefined ? null : value;
}

// Like the openstack client's PyYAML output: YAML 1.1 quoting (timestamps, 'yes', 'true' stay
// strings for 1.1 readers), single quotes, sorted keys inside values and list items, and
// sequences in mappings not indented.
const YAML_OPTIONS = { version: '1.1', singleQuote: true, sortMapEntries: true, indentSeq: false } as const;

function yaml(data: unknown): string {
  return toYaml(data, YAML_OPTIONS);
}

function json(data: unknown, options: OutputOptions): string {
  return `${JSON.stringify(data, null, options.noindent ? undefined : 2)}\n`;
}

/** Print rows of a list command. An empty table prints nothing, like the `openstack` client. */
export function emitList(
  out: TextSink,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  options: OutputOptions,
  style: CellStyle = {},
): void {
  const idx = pickColumns(columns, options.column);
  const names = idx.map((i) => columns[i]!);
  const picked = rows.map((r) => idx.map((i) => r[i]));
  const format = options.format ?? 'table';
  switch (format) {
    case 'table': {
      if (picked.length === 0) return;
      const first = picked[0]!;
      const align: Align[] = first.map((v) =>
        (style.alignNumbers ?? true) && typeof v === 'number' ? 'r' : 'l',
      );
      out.write(
        renderTable(
          names,
          picked.map((r) => r.map((v) => cell(v, style))),
          align,
        ),
      );
      return;
    }
    case 'value':
      for (const r of picked) out.write(`${r.map((v) => cell(v, style)).join(' ')}\n`);
      return;
    case 'json':
    case 'yaml': {
      const objects = picked.map((r) => Object.fromEntries(names.map((n, i) => [n, jsonValue(r[i])])));
      out.write(format === 'json' ? json(objects, options) : yaml(objects));
      return;
    }
  }
}

/** Print the fields of one object (show commands). */
export function emitShow(
  out: TextSink,
  fields: readonly string[],
  values: readonly unknown[],
  options: OutputOptions,
  style: CellStyle = {},
): void {
  const idx = pickColumns(fields, options.column);
  const names = idx.map((i) => fields[i]!);
  const picked = idx.map((i) => values[i]);
  const format = options.format ?? 'table';
  switch (format) {
    case 'table':
      out.write(
        renderTable(
          style.showHeaders ?? ['Field', 'Value'],
          names.map((n, i) => [n, cell(picked[i], style)]),
        ),
      );
      return;
    case 'value':
      for (const v of picked) out.write(`${cell(v, style)}\n`);
      return;
    case 'json':
      out.write(json(Object.fromEntries(names.map((n, i) => [n, jsonValue(picked[i])])), options));
      return;
    case 'yaml':
      // Field by field, so the fields keep their order while nested maps are sorted.
      for (const [i, n] of names.entries()) out.write(yaml({ [n]: jsonValue(picked[i]) }));
      return;
  }
}

/** Print an object's fields, in the order given (`fields`) or all its keys. */
export function emitObject(
  out: TextSink,
  obj: Record<string, unknown>,
  options: OutputOptions,
  style: CellStyle = {},
  fields: readonly string[] = Object.keys(obj),
): void {
  emitShow(
    out,
    fields,
    fields.map((f) => obj[f]),
    options,
    style,
  );
}
