import { trimSlash } from './catalog.ts';
import { classifyStatus, CloudError, parseErrorBody, parseRetryAfter } from './cloud-error.ts';
import type { RawResponse } from './http-transport.ts';

/** Turning raw HTTP answers into what the session returns or throws, and building URLs. */

/** Query parameters: undefined values are left out, arrays repeat the key. */
export type Query = Record<string, string | number | boolean | undefined | readonly string[]>;

/** How to read an answer body. */
export type ResponseType = 'json' | 'text' | 'buffer';

/** The answer body as the caller asked for it; JSON unless it is plainly not JSON. */
export function readBody(
  service: string,
  method: string,
  path: string,
  res: RawResponse,
  type: ResponseType | undefined,
): unknown {
  switch (type ?? 'json') {
    case 'buffer':
      return res.body;
    case 'text':
      return res.body.toString('utf8');
    case 'json': {
      if (res.body.length === 0) return undefined;
      const contentType = res.headers['content-type'] ?? '';
      const text = res.body.toString('utf8');
      if (!contentType.includes('json') && !/^\s*[[{]/.test(text)) return text;
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new CloudError({
          kind: 'other',
          service,
          method,
          path,
          status: res.status,
          cloudMessage: 'the answer is not valid JSON',
          ...requestIdOf(res),
        });
      }
    }
  }
}

/** The CloudError for an error answer, classified, with the cloud's own message. */
export function errorFrom(
  now: number,
  service: string,
  method: string,
  url: URL,
  res: RawResponse,
): CloudError {
  const parsed = parseErrorBody(res.body.toString('utf8'), res.headers['content-type']);
  const retryAfterMs = parseRetryAfter(res.headers['retry-after'], now);
  return new CloudError({
    kind: classifyStatus(res.status, parsed),
    service,
    method,
    path: url.pathname,
    status: res.status,
    cloudMessage: parsed.message || `HTTP ${res.status}`,
    ...(parsed.code === undefined ? {} : { cloudCode: parsed.code }),
    ...requestIdOf(res),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

export function requestIdOf(res: RawResponse): { requestId?: string } {
  const id =
    res.headers['x-openstack-request-id'] ?? res.headers['x-compute-request-id'] ?? res.headers['x-trans-id'];
  return id === undefined ? {} : { requestId: id };
}

export function readJson(res: RawResponse): unknown {
  try {
    return JSON.parse(res.body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Join an endpoint and a relative path, then add query parameters. */
export function buildUrl(endpoint: string, path: string, query?: Query): URL {
  const suffix = path === '' ? '' : path.startsWith('/') ? path : `/${path}`;
  const url = new URL(`${trimSlash(endpoint)}${suffix}`);
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) url.searchParams.append(k, String(item));
    else url.searchParams.set(k, String(v));
  }
  return url;
}
