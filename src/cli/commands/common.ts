import { Option, type Command } from 'commander';
import type { ListQuery } from '../magnum-client.ts';
import type { CoeContext } from '../coe-context.ts';
import { describeError } from '../describe-error.ts';
import { CommandFailedError } from '../coe-errors.ts';
import { parseInteger } from '../arg-parsers.ts';
import type { OutputOptions } from '../output.ts';

/** `--limit`, `--sort-key`, `--sort-dir` as commander parses them. */
export interface ListOptions {
  limit?: number;
  sortKey?: string;
  sortDir?: 'asc' | 'desc';
}

/** Add the paging and sorting options of list commands. */
export function addListOptions(cmd: Command, what: string): Command {
  return cmd
    .addOption(
      new Option('--limit <limit>', `maximum number of ${what} to return`).argParser(
        parseInteger('--limit', 1),
      ),
    )
    .option('--sort-key <sort-key>', 'column to sort results by')
    .addOption(new Option('--sort-dir <sort-dir>', 'direction to sort').choices(['asc', 'desc']));
}

/** The query of a list call. */
export function listQuery(opts: ListOptions & { marker?: string }): ListQuery {
  const q: ListQuery = {};
  if (opts.limit !== undefined) q.limit = opts.limit;
  if (opts.sortKey !== undefined) q.sortKey = opts.sortKey;
  if (opts.sortDir !== undefined) q.sortDir = opts.sortDir;
  if (opts.marker !== undefined) q.marker = opts.marker;
  return q;
}

/**
 * Run one request per name (deletes), reporting each; unlike the `openstack` client, a
 * failure does not stop the others and makes the command exit 1.
 */
export async function forEachName(
  ctx: CoeContext,
  names: readonly string[],
  run: (name: string) => Promise<void>,
  failed: (name: string, err: string) => string,
): Promise<void> {
  let failures = 0;
  for (const name of names) {
    try {
      await run(name);
    } catch (err) {
      if (names.length === 1) throw err;
      failures++;
      ctx.stderr.write(`coe: ${failed(name, describeError(err))}\n`);
    }
  }
  if (failures > 0) throw new CommandFailedError(`${failures} of ${names.length} requests failed`);
}

/**
 * Where "Request … accepted" notices go: stdout for table output, as the `openstack` client
 * does; stderr when stdout carries JSON, YAML or values, so it stays machine-readable.
 */
export function notice(ctx: CoeContext, options: OutputOptions, line: string): void {
  const sink = (options.format ?? 'table') === 'table' ? ctx.stdout : ctx.stderr;
  sink.write(`${line}\n`);
}

/** Value of a field as the `openstack` client reads it: a missing key prints as empty. */
export function field(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : '';
}
