/**
 * Exponential backoff with full jitter: the n-th consecutive failure waits a uniformly random
 * time in [0, min(cap, base * 2^(n-1))]. Jitter spreads retries of many failing keys instead
 * of sending them back to a recovering dependency in waves.
 */
export function backoffDelay(failures: number, baseMs: number, capMs: number, random: () => number): number {
  const exp = Math.min(capMs, baseMs * 2 ** Math.max(0, Math.min(failures - 1, 52)));
  return Math.floor(random() * exp);
}
