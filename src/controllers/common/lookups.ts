import type { CloudClients, Flavor, Image } from '../../cloud/index.ts';
import type { Clock } from '../../domain/index.ts';

/** What a lookup by name or id finds: one resource, several, or none. */
export type Found<T> = T | 'ambiguous' | undefined;

/** How long a found image or flavor is taken as still there. */
export const LOOKUP_TTL_MS = 60_000;

/** Past this many remembered lookups, the expired ones are dropped. */
const PRUNE_AT = 10_000;

/**
 * Name-or-id lookups the machines of a project repeat (its image, its flavor), made once for all
 * of them for a minute: the machines of a cluster are built at the same time and each resolved
 * the same two names by listing every image and flavor. Lookups asked while one is in flight
 * share it. Only a single match is remembered: a miss or an ambiguous name is asked again next
 * time, so an image uploaded after a failure is found at once. A resource deleted within the
 * minute is still handed out; the server create then fails with the cloud's own message.
 */
export class Lookups {
  private readonly found = new Map<string, { value: Promise<Found<unknown>>; until: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = LOOKUP_TTL_MS,
  ) {}

  /** `look()`'s answer for `key`, from a lookup made within the TTL when it found one match. */
  find<T>(key: string, look: () => Promise<Found<T>>): Promise<Found<T>> {
    const now = this.clock.now();
    const known = this.found.get(key);
    if (known && known.until > now) return known.value as Promise<Found<T>>;
    if (this.found.size >= PRUNE_AT)
      for (const [k, v] of this.found) if (v.until <= now) this.found.delete(k);
    const value = look();
    const entry = { value: value as Promise<Found<unknown>>, until: now + this.ttlMs };
    this.found.set(key, entry);
    const forget = () => {
      if (this.found.get(key) === entry) this.found.delete(key);
    };
    value.then((v) => {
      if (v === undefined || v === 'ambiguous') forget();
    }, forget);
    return value;
  }
}

/** A project's flavor by name or id, through the shared lookups. */
export function lookUpFlavor(
  lookups: Lookups,
  cloud: CloudClients,
  project: string,
  ref: string,
): Promise<Found<Flavor>> {
  return lookups.find(`${project}\u0000flavor\u0000${ref}`, () => cloud.compute.findFlavor(ref));
}

/** A project's image by name or id, through the shared lookups. */
export function lookUpImage(
  lookups: Lookups,
  cloud: CloudClients,
  project: string,
  ref: string,
): Promise<Found<Image>> {
  return lookups.find(`${project}\u0000image\u0000${ref}`, () => cloud.image.findImage(ref));
}
