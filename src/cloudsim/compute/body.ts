import type { z } from 'zod';
import { InputError } from '../../domain/index.ts';

/**
 * Parse Nova's (and Cinder's) `{"<resource>": {...}}` bodies, with the JSON-schema style messages
 * the real services answer: "Invalid input for field/attribute X. Value: …. <reason>".
 */
export function parseNovaBody<T>(body: unknown, resource: string, schema: z.ZodType<T>): T {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new InputError(
      `Invalid input for field/attribute ${resource}. Value: None. None is not of type 'object'`,
    );
  }
  const inner = (body as Record<string, unknown>)[resource];
  if (inner === undefined)
    throw new InputError(
      `Invalid input for field/attribute ${resource}. Value: None. '${resource}' is a required property`,
    );
  const res = schema.safeParse(inner);
  if (res.success) return res.data;
  const issue = res.error.issues[0]!;
  const path = issue.path.map(String);
  const parentPath = path.slice(0, -1);
  const parent = parentPath.reduce<unknown>(
    (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
    inner,
  );
  const value = path.reduce<unknown>(
    (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
    inner,
  );
  const field = path.length > 0 ? path.join('/') : resource;
  if (value === undefined && issue.code === 'invalid_type') {
    const last = path[path.length - 1] ?? resource;
    throw new InputError(
      `Invalid input for field/attribute ${parentPath.length ? parentPath.join('/') : resource}. Value: ${show(parent)}. '${last}' is a required property`,
    );
  }
  throw new InputError(`Invalid input for field/attribute ${field}. Value: ${show(value)}. ${issue.message}`);
}

function show(v: unknown): string {
  if (v === undefined || v === null) return 'None';
  return typeof v === 'string' ? v : JSON.stringify(v);
}
