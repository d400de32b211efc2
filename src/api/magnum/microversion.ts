import { NotAcceptableError } from '../../domain/index.ts';

/**
 * Magnum's API microversions: `OpenStack-API-Version: container-infra 1.N` (or `latest`) on
 * the request; the resolved, minimum and maximum versions on every `/v1` response.
 */

/** A microversion `1.N`. */
export interface Microversion {
  major: number;
  minor: number;
}

/** Lowest version served; a request without the header runs at it. */
export const MIN_VERSION: Microversion = { major: 1, minor: 1 };
/** Highest version served; `latest` resolves to it. */
export const MAX_VERSION: Microversion = { major: 1, minor: 14 };

/** The service name Magnum writes in its response headers. */
export const SERVICE_NAME = 'container-infrastructure-management';
/** Service names Magnum accepts in the request header. */
const SERVICE_NAMES = new Set([
  'container-infrastructure-management',
  'container-infrastructure',
  'container-infra',
]);

export const VERSION_HEADER = 'openstack-api-version';

/** `1.N` */
export function formatVersion(v: Microversion): string {
  return `${v.major}.${v.minor}`;
}

/** True when `v` ≥ `1.minor`. */
export function atLeast(v: Microversion, minor: number): boolean {
  return v.major > 1 || (v.major === 1 && v.minor >= minor);
}

function compare(a: Microversion, b: Microversion): number {
  return a.major - b.major || a.minor - b.minor;
}

/** Response headers Magnum sets on every routed `/v1` response. */
export function versionHeaders(v: Microversion): Record<string, string> {
  return {
    'OpenStack-API-Minimum-Version': `${SERVICE_NAME} ${formatVersion(MIN_VERSION)}`,
    'OpenStack-API-Maximum-Version': `${SERVICE_NAME} ${formatVersion(MAX_VERSION)}`,
    'OpenStack-API-Version': `${SERVICE_NAME} ${formatVersion(v)}`,
    Vary: 'OpenStack-API-Version',
  };
}

const RANGE = `[${formatVersion(MIN_VERSION)}, ${formatVersion(MAX_VERSION)}]`;

/** Magnum's 406 for a version outside the served range (its body carries `max_version`/`min_version`). */
function unsupported(requested: string, message: string): NotAcceptableError {
  return new NotAcceptableError(message, {
    code: 'MicroversionUnsupported',
    details: {
      code: 'magnum.microversion-unsupported',
      title: 'Requested microversion is unsupported',
      message,
      max_version: formatVersion(MAX_VERSION),
      min_version: formatVersion(MIN_VERSION),
      requested_version: requested,
    },
  });
}

/**
 * Resolve the request's microversion from the `OpenStack-API-Version` header value(s).
 * Missing → 1.1; `latest` → the maximum; a malformed header, a wrong service name or a version
 * out of range → 406 with Magnum's wording.
 */
export function resolveMicroversion(header: string | string[] | undefined): Microversion {
  if (header === undefined) return MIN_VERSION;
  const text = Array.isArray(header) ? header.join(',') : header;
  // Several services may share the header ("container-infra 1.5, compute 2.1"); pick ours.
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) return MIN_VERSION;
  const ours = entries
    .map((e) => e.split(/\s+/))
    .filter((parts) => SERVICE_NAMES.has((parts[0] ?? '').toLowerCase()));
  const parts = ours[0] ?? entries[0]!.split(/\s+/);
  if (parts.length !== 2 || !SERVICE_NAMES.has(parts[0]!.toLowerCase())) {
    throw new NotAcceptableError(
      `Invalid service type for OpenStack-API-Version header: expected "container-infra <version>" (e.g. "container-infra 1.10" or "container-infra latest"), got "${text}".`,
      { code: 'InvalidVersionHeader' },
    );
  }
  const value = parts[1]!;
  if (value.toLowerCase() === 'latest') return MAX_VERSION;
  const m = /^(\d+)\.(\d+)$/.exec(value);
  if (!m) {
    throw new NotAcceptableError(
      `Invalid value for OpenStack-API-Version header: "${value}" is not a version like 1.10 or "latest".`,
      { code: 'InvalidVersionHeader' },
    );
  }
  const v = { major: Number(m[1]), minor: Number(m[2]) };
  if (v.major !== MIN_VERSION.major) {
    throw unsupported(
      value,
      `Mutually exclusive versions requested. Version ${value} requested but not supported by this service. The supported version range is: ${RANGE}.`,
    );
  }
  if (compare(v, MIN_VERSION) < 0 || compare(v, MAX_VERSION) > 0) {
    throw unsupported(
      value,
      `Version ${value} was requested but the minor version is not supported by this service. The supported version range is: ${RANGE}.`,
    );
  }
  return v;
}

/**
 * Refuse (406) a method that exists only from `1.minor` on, as Magnum's versioned controllers do.
 * `api` names the call, e.g. "GET /v1/clusters/{cluster}/nodegroups".
 */
export function requireVersion(v: Microversion, minor: number, api: string): void {
  if (atLeast(v, minor)) return;
  throw new NotAcceptableError(
    `Version ${formatVersion(v)} was requested but the requested API ${api} is not supported for this version; it needs ${formatVersion({ major: 1, minor })} or later (send "OpenStack-API-Version: container-infra latest").`,
    { code: 'VersionNotSupported' },
  );
}
