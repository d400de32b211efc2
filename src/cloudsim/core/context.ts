import type { Clock, IdentityProvider, Logger } from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import type { CallCounts } from './calls.ts';
import type { FaultInjector } from './faults.ts';
import type { Quotas } from './quotas.ts';
import type { Repos } from './repos.ts';
import type { TransitionScheduler } from './transitions.ts';

/** Everything a service of the embedded cloud works with; built once by `embeddedCloud()`. */
export interface CloudContext {
  store: ObjectStore;
  identity: IdentityProvider;
  clock: Clock;
  /** Duration of each simulated asynchronous step, ms. */
  latencyMs: number;
  log: Logger;
  faults: FaultInjector;
  /** Calls answered, by operation (`GET /cloud/_calls`). */
  calls: CallCounts;
  transitions: TransitionScheduler;
  repos: Repos;
  quotas: Quotas;
  /** Availability zones of compute and volume, in order. */
  availabilityZones: readonly string[];
  /** Region name shown in some documents. */
  region: string;
}

/** Now on the injected clock, as an ISO string with milliseconds. */
export function nowIso(ctx: Pick<CloudContext, 'clock'>): string {
  return new Date(ctx.clock.now()).toISOString();
}

/** When a transition started now completes. */
export function dueAt(ctx: Pick<CloudContext, 'clock' | 'latencyMs'>, factor = 1): number {
  return ctx.clock.now() + Math.round(ctx.latencyMs * factor);
}

/** `2026-01-01T00:00:00Z` (Nova, Neutron, Glance). */
export function isoSeconds(iso: string): string {
  return `${iso.slice(0, 19)}Z`;
}

/** `2026-01-01T00:00:00` (Octavia). */
export function isoNaive(iso: string): string {
  return iso.slice(0, 19);
}

/** `2026-01-01T00:00:00.000000` (Cinder, Nova's launched_at). */
export function isoMicros(iso: string): string {
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}000`;
}
