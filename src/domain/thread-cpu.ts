import { readFileSync, readlinkSync } from 'node:fs';
import { constants, PerformanceObserver } from 'node:perf_hooks';

/**
 * CPU time of single threads of this process, where the system tells (Linux `/proc`): the
 * process total hides which thread is busy, and Magnetar's work is spread over the main thread,
 * the embedded cloud's thread, the workload emulator's and the key maker's. Elsewhere the two
 * CPU functions answer undefined. Each thread's full garbage collections are counted here too,
 * since no thread can observe another's heap.
 */

/** The operating system's id of the calling thread (the main thread's is the process id). */
export function currentThreadId(): number | undefined {
  try {
    // `<pid>/task/<tid>`
    const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user and system) a thread of this process has used, or undefined. */
export function threadCpuSeconds(tid: number | undefined): number | undefined {
  if (tid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // after the command name (which may hold spaces and parentheses): utime and stime are the
    // 12th and 13th fields, in clock ticks (USER_HZ, 100 on Linux)
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / 100 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Count the calling thread's full (major) garbage collections in a cell of shared memory, which
 * the thread hands to whoever started it. Each thread has a heap and collections of its own, so
 * one thread cannot see another's with a `PerformanceObserver`; a benchmark waiting for the
 * collections after a burst to end reads every thread's cell with {@link majorGcsOf}.
 */
export function majorGcCounter(): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(4);
  const cell = new Int32Array(buffer);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)
        Atomics.add(cell, 0, 1);
  }).observe({ entryTypes: ['gc'] });
  return buffer;
}

/** The full collections a thread's {@link majorGcCounter} has counted, or undefined without one. */
export function majorGcsOf(counter: SharedArrayBuffer | undefined): number | undefined {
  return counter === undefined ? undefined : Atomics.load(new Int32Array(counter), 0);
}
