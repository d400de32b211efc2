/**
 * The one error type of the OpenStack client library. Every failed call to a cloud
 * service ends up here, classified so callers can decide without parsing text:
 * "not found" counts as deleted, only transient failures are worth retrying, and quota
 * refusals are told apart from other refusals whatever service phrased them.
 */

/** What kind of failure a {@link CloudError} is. */
export type CloudErrorKind =
  | 'not-found'
  | 'conflict'
  | 'quota'
  | 'bad-request'
  | 'unauthorized'
  | 'forbidden'
  | 'transient'
  | 'timeout'
  | 'network'
  | 'other';

/** Fields of a {@link CloudError}. */
export interface CloudErrorInit {
  kind: CloudErrorKind;
  /** Service type that failed, e.g. `compute`, `identity`. */
  service: string;
  /** The cloud's own message (verbatim), or a description of a local failure. */
  cloudMessage: string;
  status?: number;
  /** The cloud's error code/type when it gives one, e.g. `OverQuota`, `itemNotFound`. */
  cloudCode?: string;
  requestId?: string;
  method?: string;
  /** Request path (no query string). */
  path?: string;
  /** Server-advised wait before a retry (from `Retry-After`). */
  retryAfterMs?: number;
  cause?: unknown;
}

/** A failed call to a cloud service. */
export class CloudError extends Error {
  /** HTTP status, when the cloud answered. */
  readonly status?: number;
  /** Whether retrying the same call later may succeed (5xx except 501, 429, timeouts, resets). */
  readonly transient: boolean;
  readonly kind: CloudErrorKind;
  /** Service type that failed. */
  readonly service: string;
  /** The cloud's own message, verbatim. */
  readonly cloudMessage: string;
  /** The cloud's error code or type, e.g. Neutron `OverQuota`, Nova `itemNotFound`. */
  readonly cloudCode?: string;
  /** `x-openstack-request-id` (or the service's equivalent) of the failed call. */
  readonly requestId?: string;
  readonly method?: string;
  readonly path?: string;
  /** Server-advised wait before retrying, from `Retry-After`. */
  readonly retryAfterMs?: number;

  constructor(init: CloudErrorInit) {
    const where = [init.method, init.path].filter(Boolean).join(' ');
    const status = init.status === undefined ? '' : ` (HTTP ${init.status})`;
    super(
      `${init.service}${where ? ` ${where}` : ''}: ${init.cloudMessage}${status}${init.requestId ? ` [${init.requestId}]` : ''}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.name = 'CloudError';
    this.kind = init.kind;
    this.transient = isTransientKind(init.kind);
    this.service = init.service;
    this.cloudMessage = init.cloudMessage;
    if (init.status !== undefined) this.status = init.status;
    if (init.cloudCode !== undefined) this.cloudCode = init.cloudCode;
    if (init.requestId !== undefined) this.requestId = init.requestId;
    if (init.method !== undefined) this.method = init.method;
    if (init.path !== undefined) this.path = init.path;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
  }
}

function isTransientKind(kind: CloudErrorKind): boolean {
  switch (kind) {
    case 'transient':
    case 'timeout':
    case 'network':
      return true;
    case 'not-found':
    case 'conflict':
    case 'quota':
    case 'bad-request':
    case 'unauthorized':
    case 'forbidden':
    case 'other':
      return false;
  }
}

/** True when `err` is a CloudError saying the resource does not exist. */
export function isNotFound(err: unknown): err is CloudError {
  return err instanceof CloudError && err.kind === 'not-found';
}

/** True when `err` is a CloudError for a refused-by-quota call. */
export function isQuotaExceeded(err: unknown): err is CloudError {
  return err instanceof CloudError && err.kind === 'quota';
}

/** True when `err` is a CloudError for which a later retry may succeed. */
export function isTransient(err: unknown): err is CloudError {
  return err instanceof CloudError && err.transient;
}

/**
 * Run a delete, treating "not found" as success (the thing is gone either way).
 * Returns true when this call deleted it, false when it was already gone.
 */
export async function deleteIgnoringNotFound(del: () => Promise<unknown>): Promise<boolean> {
  try {
    await del();
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

// Each service phrases quota refusals its own way:
// Nova 403 "Quota exceeded for cores: …", "Quota exceeded, too many key pairs.",
//   "Maximum number of ports exceeded" (Nova relaying Neutron), older 413 overLimit;
// Neutron 409 OverQuota "Quota exceeded for resources: ['port']."; Octavia 403
// "Quota has been met for resources: Load Balancer"; Cinder 413 "VolumeLimitExceeded:
// Maximum number of volumes allowed (10) exceeded …" / "VolumeSizeExceedsAvailableQuota";
// Glance 413 "… is over limit …" / "exceeds the quota"; Swift 413 "Upload exceeds quota."
const QUOTA_TEXT =
  /quota exceeded|exceeded quota|exceeds?( the)?( allowed)?( \w+)? quota|over ?quota|overlimit|over limit|quota has been met|maximum number of [\w\s-]+ (exceeded|allowed)|limitexceeded|exceedsavailablequota/i;
const QUOTA_CODES = new Set(['OverQuota', 'overLimit', 'QuotaExceeded', 'QuotaError', 'OverLimit']);

/** Parsed error body of any OpenStack service. */
export interface ParsedErrorBody {
  message: string;
  code?: string;
}

/**
 * Extract the message from an OpenStack error body, whatever service wrote it:
 * Nova/Cinder `{"itemNotFound":{"message":…,"code":404}}`, Neutron
 * `{"NeutronError":{"type":…,"message":…}}`, Octavia `{"faultstring":…}`, Keystone
 * `{"error":{"message":…,"title":…}}`, API-WG `{"errors":[{"detail":…}]}`, and plain
 * text or HTML (Glance, Swift, proxies).
 */
export function parseErrorBody(raw: string, contentType = ''): ParsedErrorBody {
  const text = raw.trim();
  if (text === '') return { message: '' };
  const looksJson = contentType.includes('json') || text.startsWith('{') || text.startsWith('[');
  if (looksJson) {
    try {
      const parsed = fromJson(JSON.parse(text) as unknown);
      if (parsed) return parsed;
    } catch {
      // not JSON after all: fall through to text handling
    }
  }
  return { message: fromText(text) };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

function record(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

function fromJson(body: unknown): ParsedErrorBody | undefined {
  const obj = record(body);
  if (!obj) return undefined;
  const neutron = record(obj.NeutronError);
  if (neutron) {
    const message = str(neutron.message) ?? str(neutron.detail) ?? '';
    const type = str(neutron.type);
    return type ? { message, code: type } : { message };
  }
  const faultstring = str(obj.faultstring);
  if (faultstring) return { message: faultstring };
  const errors = obj.errors;
  if (Array.isArray(errors) && errors.length > 0) {
    const first = record(errors[0]);
    const message = str(first?.detail) ?? str(first?.title) ?? str(first?.message);
    if (message) {
      const code = str(first?.code) ?? str(first?.title);
      return code ? { message, code } : { message };
    }
  }
  const keystone = record(obj.error);
  if (keystone) {
    const message = str(keystone.message) ?? str(keystone.title) ?? '';
    const code = str(keystone.title);
    return code ? { message, code } : { message };
  }
  for (const key of ['message', 'error_message', 'detail', 'description', 'title']) {
    const message = str(obj[key]);
    if (message) return { message: unwrapNestedJson(message) };
  }
  // Nova and Cinder: a single key naming the fault, holding {message, code}.
  for (const [key, value] of Object.entries(obj)) {
    const inner = record(value);
    const message = str(inner?.message) ?? str(inner?.explanation);
    if (message) return { message, code: key };
  }
  return undefined;
}

// Magnum's legacy "error_message" holds a JSON string with its own faultstring.
function unwrapNestedJson(message: string): string {
  if (!message.startsWith('{')) return message;
  try {
    return fromJson(JSON.parse(message) as unknown)?.message || message;
  } catch {
    return message;
  }
}

function fromText(text: string): string {
  if (!/<[a-z!/][^>]*>/i.test(text)) return text.replace(/\s+/g, ' ').trim();
  // HTML error pages (Glance, Swift, proxies): the body text is the message; the
  // title and h1 only repeat the status line, so use them only when nothing else is left.
  const heading =
    /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(text)?.[1] ?? /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1];
  // Proxies (nginx, Apache) sign their pages after an <hr>: not part of the message.
  const body = text
    .replace(/<hr[^>]*>[\s\S]*$/i, ' ')
    .replace(/<head[\s\S]*?<\/head>/gi, ' ')
    .replace(/<title[\s\S]*?<\/title>/gi, ' ')
    .replace(/<h1[\s\S]*?<\/h1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ');
  const cleaned = decodeEntities(body).replace(/\s+/g, ' ').trim();
  if (cleaned) return cleaned;
  return decodeEntities((heading ?? '').replace(/<[^>]+>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();
}

function decodeEntities(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Classify an HTTP error answer. */
export function classifyStatus(status: number, parsed: ParsedErrorBody): CloudErrorKind {
  const quota =
    (parsed.code !== undefined && QUOTA_CODES.has(parsed.code)) || QUOTA_TEXT.test(parsed.message);
  if (status === 404) return 'not-found';
  if ((status === 403 || status === 409 || status === 413) && quota) return 'quota';
  if (status === 400 || status === 422) return 'bad-request';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 409) return 'conflict';
  if (status === 429) return 'transient';
  if (status >= 500 && status !== 501) return 'transient';
  return 'other';
}

/** Parse `Retry-After` (seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
