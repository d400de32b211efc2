import type { FastifyRequest } from 'fastify';
import { baseUrl } from '../core/http.ts';

/** Nova's `self` and `bookmark` links of a resource under `/cloud/compute`. */
export function novaLinks(req: FastifyRequest, collection: string, id: string) {
  const base = `${baseUrl(req)}/cloud/compute`;
  return [
    { rel: 'self', href: `${base}/v2.1/${collection}/${id}` },
    { rel: 'bookmark', href: `${base}/${collection}/${id}` },
  ];
}

/** Nova's bookmark-only link (image and flavor references inside a server). */
export function novaBookmark(req: FastifyRequest, collection: string, id: string) {
  return [{ rel: 'bookmark', href: `${baseUrl(req)}/cloud/compute/${collection}/${id}` }];
}
