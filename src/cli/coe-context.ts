import type { Clock } from '../domain/index.ts';
import type { MagnumClient } from './magnum-client.ts';
import type { TextSink } from './output.ts';

/**
 * What every `coe` command gets: its streams, environment, working directory, clock, and a
 * Magnum client created on first use (so `--help` and usage errors need no configuration).
 */
export interface CoeContext {
  stdout: TextSink & { isTTY?: boolean };
  stderr: TextSink & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Directory relative paths (`--dir`, CSR files) are resolved against. */
  cwd: string;
  /** Time source of `--wait` polling. */
  clock: Clock;
  /** The Magnum client for this run's connection options. */
  client(): Promise<MagnumClient>;
}

/** Print a line on stderr. */
export function warn(ctx: CoeContext, line: string): void {
  ctx.stderr.write(`${line}\n`);
}
