/**
 * Just enough DER (ITU-T X.690) to write the certificates Magnetar issues itself and to read a
 * CA certificate's subject and key identifier back: tag-length-value encoding of the handful of
 * ASN.1 types an X.509 certificate uses (RFC 5280). Keys and signatures come from `node:crypto`;
 * this module only lays out bytes.
 */

/** Tag numbers of the universal types used here (short form, primitive unless noted). */
export const Tag = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utf8String: 0x0c,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One element: `tag`, then the length of the concatenated `parts`, then the parts. */
export function tlv(tag: number, ...parts: Buffer[]): Buffer {
  const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), lengthBytes(body.length), body]);
}

export const sequence = (...parts: Buffer[]): Buffer => tlv(Tag.sequence, ...parts);
export const set = (...parts: Buffer[]): Buffer => tlv(Tag.set, ...parts);
export const octetString = (bytes: Buffer): Buffer => tlv(Tag.octetString, bytes);
export const utf8String = (text: string): Buffer => tlv(Tag.utf8String, Buffer.from(text, 'utf8'));
export const boolean = (value: boolean): Buffer => tlv(Tag.boolean, Buffer.from([value ? 0xff : 0]));

/** A context-specific tag: `[n]` constructed (explicit, or an implicit SEQUENCE) or primitive. */
export function contextTag(n: number, constructed: boolean): number {
  return 0x80 | (constructed ? 0x20 : 0) | n;
}

/** A non-negative INTEGER from big-endian bytes (a leading zero keeps it positive). */
export function unsignedInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  return tlv(Tag.integer, trimmed[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

/** A small non-negative INTEGER. */
export function smallInteger(n: number): Buffer {
  return unsignedInteger(Buffer.from([n & 0xff]));
}

/** A BIT STRING of whole bytes (no unused bits): signatures, public keys. */
export function bitString(bytes: Buffer): Buffer {
  return tlv(Tag.bitString, Buffer.from([0]), bytes);
}

/**
 * A named-bit BIT STRING (keyUsage) with bits `bits` set, bit 0 first; DER drops the trailing
 * zero bits and says how many bits of the last byte are unused.
 */
export function namedBits(bits: number[]): Buffer {
  const highest = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(highest / 8) + 1);
  for (const b of bits) bytes[b >> 3]! |= 0x80 >> (b & 7);
  return tlv(Tag.bitString, Buffer.from([7 - (highest & 7)]), bytes);
}

/** An OBJECT IDENTIFIER from its dotted form. */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out = [40 * arcs[0]! + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const chunk = [arc & 0x7f];
    for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128))
      chunk.unshift(0x80 | (rest & 0x7f));
    out.push(...chunk);
  }
  return tlv(Tag.oid, Buffer.from(out));
}

/** A certificate validity time: UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 §4.1.2.5). */
export function time(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '') + 'Z';
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050
    ? tlv(Tag.utcTime, Buffer.from(digits.slice(2), 'ascii'))
    : tlv(Tag.generalizedTime, Buffer.from(digits, 'ascii'));
}

/** An IPv4 or IPv6 address as the 4 or 16 bytes of a subjectAltName iPAddress. */
export function ipBytes(ip: string): Buffer {
  if (ip.includes(':')) {
    if (ip.split('::').length > 2) throw new Error(`not an IP address: ${ip}`);
    const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
    const groups = (s: string | undefined) => (s ? s.split(':').filter((g) => g !== '') : []);
    const h = groups(head);
    const t = groups(tail);
    const words = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
    if (words.length !== 8 || words.some((w) => !/^[0-9a-fA-F]{1,4}$/.test(w)))
      throw new Error(`not an IP address: ${ip}`);
    const out = Buffer.alloc(16);
    words.forEach((w, i) => out.writeUInt16BE(parseInt(w, 16), 2 * i));
    return out;
  }
  const parts = ip.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255))
    throw new Error(`not an IP address: ${ip}`);
  return Buffer.from(parts.map(Number));
}

/** One element read back: its tag, where its contents are, and where it ends. */
export interface Element {
  tag: number;
  /** The whole element, tag and length included. */
  raw: Buffer;
  /** The contents. */
  value: Buffer;
}

/** The element starting at `offset` of `der`. */
export function readElement(der: Buffer, offset = 0): Element {
  const tag = der[offset];
  let length = der[offset + 1];
  if (tag === undefined || length === undefined) throw new Error('truncated DER');
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new Error('unsupported DER length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[start + i]!;
    start += count;
  }
  const end = start + length;
  if (end > der.length) throw new Error('truncated DER');
  return { tag, raw: der.subarray(offset, end), value: der.subarray(start, end) };
}

/** The elements inside a constructed element's contents, in order. */
export function children(value: Buffer): Element[] {
  const out: Element[] = [];
  for (let offset = 0; offset < value.length;) {
    const e = readElement(value, offset);
    out.push(e);
    offset += e.raw.length;
  }
  return out;
}

/** The DER bytes of a PEM block. */
export function pemBody(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
}

/** A PEM block of `label` around `der`, 64 characters a line, no trailing newline. */
export function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`].join('\n');
}
