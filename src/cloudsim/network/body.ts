import { z } from 'zod';
import { InputError } from '../../domain/index.ts';

/**
 * Parse Neutron's `{"<resource>": {...}}` request bodies, with Neutron's messages for a missing
 * wrapper, missing required attributes and bad values.
 */
export function parseNeutronBody<T>(body: unknown, resource: string, schema: z.ZodType<T>): T {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new InputError('Resource body required', { code: 'HTTPBadRequest' });
  }
  const inner = (body as Record<string, unknown>)[resource];
  if (inner === undefined || inner === null || typeof inner !== 'object' || Array.isArray(inner)) {
    throw new InputError(`Unable to find '${resource}' in request body`, { code: 'HTTPBadRequest' });
  }
  return parseNeutronItem(inner, schema);
}

/**
 * Parse a bulk create body, `{"<collection>": [{...}, ...]}`: every item as one of
 * {@link parseNeutronBody}, the first bad item failing the whole request.
 */
export function parseNeutronBulk<T>(body: unknown, collection: string, schema: z.ZodType<T>): T[] {
  const items = (body as Record<string, unknown>)[collection];
  if (!Array.isArray(items) || items.length === 0) {
    throw new InputError(`Unable to find '${collection}' in request body`, { code: 'HTTPBadRequest' });
  }
  return (items as unknown[]).map((item) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item))
      throw new InputError(
        `Invalid input for ${collection}. Reason: ${describe(item)} is not a dictionary.`,
        {
          code: 'HTTPBadRequest',
        },
      );
    return parseNeutronItem(item, schema);
  });
}

function parseNeutronItem<T>(inner: object, schema: z.ZodType<T>): T {
  const res = schema.safeParse(inner);
  if (res.success) return res.data;
  const issue = res.error.issues[0]!;
  const attr = issue.path.map(String).join('.');
  const value = issue.path.reduce<unknown>(
    (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k as string] : undefined),
    inner,
  );
  if (value === undefined && issue.code === 'invalid_type') {
    throw new InputError(`Failed to parse request. Required attribute '${attr}' not specified`, {
      code: 'HTTPBadRequest',
    });
  }
  throw new InputError(
    `Invalid input for ${attr}. Reason: ${describe(value)} is not valid (${issue.message}).`,
    { code: 'HTTPBadRequest' },
  );
}

function describe(v: unknown): string {
  return typeof v === 'string' ? `'${v}'` : (JSON.stringify(v) ?? 'None');
}

/** Neutron's rule for a tag: 1 to 255 characters, no comma (the list filters split on commas). */
export function isValidTag(tag: string): boolean {
  return tag.length > 0 && tag.length <= 255 && !tag.includes(',');
}

/** Tags given in a create request (`tag-creation`), each checked as the tag API checks it, duplicates dropped. */
export const CreateTags = z
  .array(z.string().refine(isValidTag, 'not a valid tag'))
  .transform((tags) => [...new Set(tags)])
  .optional();
