import type { FastifyReply, FastifyRequest } from 'fastify';
import { InputError } from '../../domain/index.ts';
import { CloudHttpError } from './errors.ts';

/** A service's microversion range, e.g. Nova `compute` 2.1–2.79. */
export interface MicroversionRange {
  /** Name in `OpenStack-API-Version: <service> X.Y`. */
  service: string;
  /** Legacy header as written on the wire (`X-OpenStack-Nova-API-Version`), if the service has one. */
  legacyHeader?: string;
  major: number;
  minMinor: number;
  maxMinor: number;
}

const versions = new WeakMap<FastifyRequest, number>();

/** The minor version negotiated for a request (set by {@link microversionHook}). */
export function minorOf(req: FastifyRequest): number {
  return versions.get(req) ?? 0;
}

function requested(req: FastifyRequest, range: MicroversionRange): string | undefined {
  const header = req.headers['openstack-api-version'];
  const values = Array.isArray(header) ? header : header ? header.split(',') : [];
  for (const v of values) {
    const [svc, ver] = v.trim().split(/\s+/);
    if (svc?.toLowerCase() === range.service && ver) return ver;
  }
  if (range.legacyHeader) {
    const legacy = req.headers[range.legacyHeader.toLowerCase()];
    const l = Array.isArray(legacy) ? legacy[0] : legacy;
    if (l) return l.trim();
  }
  return undefined;
}

/**
 * Microversion negotiation as the OpenStack services do it: absent → the minimum, `latest` → the
 * maximum, malformed → 400, out of range → 406; the chosen version is echoed in the response
 * headers with `Vary`.
 */
export function microversionHook(range: MicroversionRange) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const text = requested(req, range);
    let minor = range.minMinor;
    if (text !== undefined) {
      if (text.toLowerCase() === 'latest') minor = range.maxMinor;
      else {
        const m = /^(\d+)\.(\d+)$/.exec(text);
        if (!m)
          throw new InputError(
            `API Version String ${text} is of invalid format. Must be of format MajorNum.MinorNum.`,
          );
        const major = Number(m[1]);
        minor = Number(m[2]);
        if (major !== range.major || minor < range.minMinor || minor > range.maxMinor) {
          throw new CloudHttpError(
            406,
            `Version ${text} is not supported by the API. Minimum is ${range.major}.${range.minMinor} and maximum is ${range.major}.${range.maxMinor}.`,
          );
        }
      }
    }
    versions.set(req, minor);
    const v = `${range.major}.${minor}`;
    void reply.header('openstack-api-version', `${range.service} ${v}`);
    const vary = ['OpenStack-API-Version'];
    if (range.legacyHeader) {
      void reply.header(range.legacyHeader, v);
      vary.push(range.legacyHeader);
    }
    void reply.header('vary', vary);
  };
}
