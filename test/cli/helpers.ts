import { Writable } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCoe, type CoeIo } from '../../src/cli/coe.ts';

/** A stream that keeps what was written, and can wait for some text to appear. */
export class Capture extends Writable {
  text = '';
  private waiters: { re: RegExp; resolve: () => void }[] = [];

  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.text += chunk.toString();
    this.waiters = this.waiters.filter((w) => {
      if (!w.re.test(this.text)) return true;
      w.resolve();
      return false;
    });
    done();
  }

  /** Resolve once the captured text matches `re`. */
  until(re: RegExp): Promise<void> {
    if (re.test(this.text)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ re, resolve }));
  }
}

/** Result of one in-process `coe` run. */
export interface CoeRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `coe <args>` in-process. */
export async function coe(args: string[], io: Omit<CoeIo, 'stdout' | 'stderr'> = {}): Promise<CoeRun> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runCoe(['node', 'coe', ...args], { env: {}, ...io, stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** A temporary directory, removed by the returned function. */
export function tempDir(prefix = 'coe-test-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
