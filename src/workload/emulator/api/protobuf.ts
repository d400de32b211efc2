import { InputError } from '../../../domain/index.ts';

/**
 * Request bodies in Kubernetes' protobuf encoding, for the kinds the emulated API server
 * stores. `kubectl create namespace|configmap|secret` send their object this way (typed
 * clients prefer protobuf), while `kubectl apply` sends JSON. The encoding: the bytes `k8s\0`,
 * then a `runtime.Unknown` message (1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding,
 * 4 contentType) whose `raw` is the object's own message. Only the fields the emulator keeps are
 * read; the rest are skipped, as protobuf allows. Any other kind is answered 415, so the caller
 * learns to send JSON instead of getting a half-read object.
 */

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** The media type of Kubernetes' protobuf encoding. */
export const KUBE_PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** One field of a message: varint number, or bytes (length-delimited). Fixed-width fields are skipped. */
type Field = { no: number; varint?: bigint; bytes?: Buffer };

function malformed(why: string): InputError {
  return new InputError(`the body of the request was in an unknown format: protobuf ${why}`, {
    code: 'BadRequest',
  });
}

function readVarint(buf: Buffer, at: number): [bigint, number] {
  let value = 0n;
  let shift = 0n;
  for (let i = at; i < buf.length && shift < 70n; i++) {
    const b = buf[i]!;
    value |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [value, i + 1];
    shift += 7n;
  }
  throw malformed('varint runs past the end');
}

/** The fields of one message, in order (repeated fields appear once per value). */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  while (at < buf.length) {
    const [key, next] = readVarint(buf, at);
    at = next;
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (no === 0) throw malformed('field number 0');
    if (wire === 0) {
      const [v, n] = readVarint(buf, at);
      out.push({ no, varint: v });
      at = n;
    } else if (wire === 2) {
      const [len, n] = readVarint(buf, at);
      const end = n + Number(len);
      if (end > buf.length) throw malformed('field runs past the end');
      out.push({ no, bytes: buf.subarray(n, end) });
      at = end;
    } else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else throw malformed(`wire type ${wire}`);
  }
  if (at !== buf.length) throw malformed('fixed-width field runs past the end');
  return out;
}

const text = (f: Field | undefined) => f?.bytes?.toString('utf8');
const first = (fs: Field[], no: number) => fs.find((f) => f.no === no);

/** A `map<string, string|bytes>` field: repeated entries {1 key, 2 value}. */
function map(fs: Field[], no: number, value: (b: Buffer) => string): Record<string, string> | undefined {
  const entries = fs.filter((f) => f.no === no && f.bytes);
  if (entries.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    const kv = fields(e.bytes!);
    out[text(first(kv, 1)) ?? ''] = value(first(kv, 2)?.bytes ?? Buffer.alloc(0));
  }
  return out;
}

const utf8 = (b: Buffer) => b.toString('utf8');
const base64 = (b: Buffer) => b.toString('base64');

/** ObjectMeta: 1 name, 2 generateName, 3 namespace, 11 labels, 12 annotations, 14 finalizers. */
function objectMeta(buf: Buffer | undefined): Record<string, unknown> {
  const fs = buf ? fields(buf) : [];
  const meta: Record<string, unknown> = {};
  const set = (key: string, v: unknown) => {
    if (v !== undefined && v !== '') meta[key] = v;
  };
  set('name', text(first(fs, 1)));
  set('generateName', text(first(fs, 2)));
  set('namespace', text(first(fs, 3)));
  set('labels', map(fs, 11, utf8));
  set('annotations', map(fs, 12, utf8));
  const finalizers = fs.filter((f) => f.no === 14).map(text);
  if (finalizers.length > 0) meta.finalizers = finalizers;
  return meta;
}

/** The kinds read from protobuf, each from its message's fields to the JSON object. */
const DECODERS: Record<string, (fs: Field[]) => Record<string, unknown>> = {
  // Namespace: 1 metadata, 2 spec {1 finalizers}
  Namespace: (fs) => {
    const spec = first(fs, 2)?.bytes;
    const finalizers = spec
      ? fields(spec)
          .filter((f) => f.no === 1)
          .map(text)
      : [];
    return finalizers.length > 0 ? { spec: { finalizers } } : {};
  },
  // ConfigMap: 1 metadata, 2 data, 3 binaryData, 4 immutable
  ConfigMap: (fs) => ({
    ...(map(fs, 2, utf8) ? { data: map(fs, 2, utf8) } : {}),
    ...(map(fs, 3, base64) ? { binaryData: map(fs, 3, base64) } : {}),
    ...(first(fs, 4)?.varint !== undefined ? { immutable: first(fs, 4)!.varint !== 0n } : {}),
  }),
  // Secret: 1 metadata, 2 data (bytes), 3 type, 4 stringData, 5 immutable
  Secret: (fs) => ({
    ...(map(fs, 2, base64) ? { data: map(fs, 2, base64) } : {}),
    ...(text(first(fs, 3)) ? { type: text(first(fs, 3)) } : {}),
    ...(map(fs, 4, utf8) ? { stringData: map(fs, 4, utf8) } : {}),
    ...(first(fs, 5)?.varint !== undefined ? { immutable: first(fs, 5)!.varint !== 0n } : {}),
  }),
  // Eviction (policy/v1): 1 metadata, 2 deleteOptions (not used by the emulator)
  Eviction: () => ({}),
};

/**
 * The JSON form of a protobuf request body. Throws InputError (400) for bytes that are not the
 * encoding, and code `UnsupportedMediaType` (415) for a kind the emulator does not read this way.
 */
export function decodeKubeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC))
    throw malformed('body does not start with the k8s\\0 prefix');
  const unknown = fields(body.subarray(MAGIC.length));
  const typeMeta = fields(first(unknown, 1)?.bytes ?? Buffer.alloc(0));
  const apiVersion = text(first(typeMeta, 1)) ?? '';
  const kind = text(first(typeMeta, 2)) ?? '';
  if (text(first(unknown, 3))) throw malformed(`content encoding ${text(first(unknown, 3))}`);
  const decode = DECODERS[kind];
  if (!decode) {
    throw new InputError(
      `the body of the request was in an unknown format - the emulated workload API reads ${kind || 'this kind'} only as application/json (kubectl apply -f sends JSON)`,
      { code: 'UnsupportedMediaType' },
    );
  }
  const object = fields(first(unknown, 2)?.bytes ?? Buffer.alloc(0));
  return { apiVersion, kind, metadata: objectMeta(first(object, 1)?.bytes), ...decode(object) };
}
