import type { CloudContext } from '../core/context.ts';
import type { Caller } from '../core/http.ts';
import type { Image } from '../core/records.ts';
import type { Row } from '../core/repo.ts';

/** Glance's visibility rule: own images, public and community ones; admins see all. */
export function canSeeImage(caller: Caller, row: Row<Image>): boolean {
  return (
    caller.isAdmin ||
    row.rec.owner === caller.project ||
    row.rec.visibility === 'public' ||
    row.rec.visibility === 'community'
  );
}

/** Look an image up by id as `caller` sees it. */
export async function findImage(
  ctx: CloudContext,
  caller: Caller,
  id: string,
): Promise<Row<Image> | undefined> {
  const row = await ctx.repos.images.find(id);
  return row && canSeeImage(caller, row) ? row : undefined;
}
