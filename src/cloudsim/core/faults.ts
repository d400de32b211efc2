import { z } from 'zod';
import { InputError } from '../../domain/index.ts';

/** The services of the embedded cloud, as named in fault rules and operation names. */
export const SERVICE_NAMES = [
  'compute',
  'network',
  'load-balancer',
  'volume',
  'image',
  'object-store',
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/**
 * What an injected failure does.
 * - `http`: answer with this status (and message) in the service's error shape.
 * - `quota`: answer with the service's own quota error (Nova 403, Neutron 409, Cinder 413, Octavia 403).
 * - `error-state`: accept the call, then let the resource end in its error state: a server goes
 *   `ERROR` with this fault message (default "No valid host was found. "), a load balancer
 *   `provisioning_status: ERROR`, a volume `error`.
 */
export const FaultFailureSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('http'),
    status: z.number().int().min(400).max(599),
    message: z.string().optional(),
  }),
  z.object({ type: z.literal('quota'), resource: z.string().optional() }),
  z.object({ type: z.literal('error-state'), message: z.string().optional() }),
]);
export type FaultFailure = z.infer<typeof FaultFailureSchema>;

/**
 * A fault rule as configured (`POST /cloud/_faults` or {@link FaultInjector.add}).
 * `operation` is an operation name such as `compute.servers.create` or `network.floatingips.update`
 * (see {@link FaultInjector.operations}); a trailing `*` matches a prefix (`network.*`).
 */
export const FaultRuleInputSchema = z.discriminatedUnion('kind', [
  /** Fail the next `count` calls of `operation`. */
  z.object({
    kind: z.literal('fail'),
    operation: z.string().min(1),
    count: z.number().int().positive().default(1),
    failure: FaultFailureSchema,
  }),
  /** Answer a fraction of calls with a 5xx. */
  z.object({
    kind: z.literal('error-rate'),
    /** Fraction of calls that fail, 0..1. */
    rate: z.number().min(0).max(1),
    /** @default 503 */
    status: z.number().int().min(500).max(599).default(503),
    /** Only calls of these operations (patterns as in `fail`). @default every operation */
    operation: z.string().min(1).optional(),
    /** Seed of the random sequence, for reproducible runs. @default random */
    seed: z.number().int().optional(),
  }),
  /** Delay calls by `delayMs` (on the injected clock). */
  z.object({
    kind: z.literal('slow'),
    delayMs: z.number().int().positive(),
    /** @default every operation */
    operation: z.string().min(1).optional(),
    /** Only the next `count` matching calls. @default unlimited */
    count: z.number().int().positive().optional(),
  }),
]);
export type FaultRuleInput = z.input<typeof FaultRuleInputSchema>;
type ParsedRule = z.output<typeof FaultRuleInputSchema>;

/** A configured rule, with its id and how often it has fired. */
export type FaultRule = ParsedRule & { id: string; fired: number };

/** What the request hook must do for one call. */
export interface FaultDecision {
  delayMs: number;
  failure?: FaultFailure | { type: 'http'; status: number; message?: string };
}

function matches(pattern: string | undefined, operation: string): boolean {
  if (pattern === undefined || pattern === '*') return true;
  if (pattern.endsWith('*')) return operation.startsWith(pattern.slice(0, -1));
  return pattern === operation;
}

/** A small seeded PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Fault injection for tests and chaos runs: 5xx at a rate, a given failure on the next N calls
 * of an operation, slow calls. Rules live in memory (a chaos setting, not cloud state).
 */
export class FaultInjector {
  private rules: FaultRule[] = [];
  private readonly randoms = new Map<string, () => number>();
  private seq = 0;
  private readonly known = new Set<string>();

  /** Record an operation name served by the cloud (done by the routes at start). */
  declareOperation(operation: string): void {
    this.known.add(operation);
  }

  /** Every operation name a rule can target, sorted. */
  operations(): string[] {
    return [...this.known].sort();
  }

  /** Add a rule; InputError when it is malformed or targets no known operation. */
  add(input: FaultRuleInput): FaultRule {
    const parsed = FaultRuleInputSchema.safeParse(input);
    if (!parsed.success)
      throw new InputError(
        `invalid fault rule: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    const rule: FaultRule = { ...parsed.data, id: `fault-${++this.seq}`, fired: 0 };
    const op = rule.operation;
    if (op !== undefined && this.known.size > 0 && ![...this.known].some((k) => matches(op, k))) {
      throw new InputError(
        `invalid fault rule: no operation matches "${op}"; known operations: ${this.operations().join(', ')}`,
      );
    }
    if (rule.kind === 'error-rate')
      this.randoms.set(rule.id, rng(rule.seed ?? Math.floor(Math.random() * 2 ** 31)));
    this.rules.push(rule);
    return rule;
  }

  /** Shorthand: fail the next `count` calls of `operation` with `failure`. */
  failNext(operation: string, count: number, failure: FaultFailure): FaultRule {
    return this.add({ kind: 'fail', operation, count, failure });
  }

  /** Shorthand: answer `rate` of the calls (of `operation`, default all) with `status`. */
  errorRate(rate: number, options: { status?: number; operation?: string; seed?: number } = {}): FaultRule {
    return this.add({ kind: 'error-rate', rate, ...options });
  }

  /** Shorthand: delay calls by `delayMs`. */
  slow(delayMs: number, options: { operation?: string; count?: number } = {}): FaultRule {
    return this.add({ kind: 'slow', delayMs, ...options });
  }

  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  remove(id: string): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    this.randoms.delete(id);
    return this.rules.length !== before;
  }

  clear(): void {
    this.rules = [];
    this.randoms.clear();
  }

  /**
   * Decide for one call of `operation` (called by the request hook). Consumes counted rules.
   * `error-state` failures are not decided here: the handler asks {@link takeErrorState}.
   */
  decide(operation: string): FaultDecision {
    const out: FaultDecision = { delayMs: 0 };
    for (const rule of this.rules) {
      switch (rule.kind) {
        case 'slow':
          if (!matches(rule.operation, operation)) break;
          out.delayMs += rule.delayMs;
          rule.fired++;
          if (rule.count !== undefined && rule.fired >= rule.count) this.remove(rule.id);
          break;
        case 'error-rate': {
          if (out.failure || !matches(rule.operation, operation)) break;
          const r = this.randoms.get(rule.id)!;
          if (r() < rule.rate) {
            rule.fired++;
            out.failure = { type: 'http', status: rule.status };
          }
          break;
        }
        case 'fail':
          if (out.failure || rule.failure.type === 'error-state' || !matches(rule.operation, operation))
            break;
          rule.fired++;
          out.failure = rule.failure;
          if (rule.fired >= rule.count) this.remove(rule.id);
          break;
      }
    }
    return out;
  }

  /** Consume an `error-state` failure for `operation`; returns its message (or '' for the default). */
  takeErrorState(operation: string): string | undefined {
    for (const rule of this.rules) {
      if (rule.kind !== 'fail' || rule.failure.type !== 'error-state' || !matches(rule.operation, operation))
        continue;
      rule.fired++;
      if (rule.fired >= rule.count) this.remove(rule.id);
      return rule.failure.message ?? '';
    }
    return undefined;
  }
}
