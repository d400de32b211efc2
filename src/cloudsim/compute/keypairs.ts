import { createHash, generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { z } from 'zod';
import { ConflictError, InputError, NotAllowedError, NotFoundError } from '../../domain/index.ts';
import { isoMicros, nowIso, type CloudContext } from '../core/context.ts';
import { bodyOf, callerOf, p, q, type Caller, type ServiceRoutes } from '../core/http.ts';
import { minorOf } from '../core/microversion.ts';
import type { Keypair } from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import { parseNovaBody } from './body.ts';

const generate = promisify(generateKeyPair);

function sshString(buf: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(buf.length);
  return Buffer.concat([len, buf]);
}

function mpint(buf: Buffer): Buffer {
  let b = buf;
  while (b.length > 1 && b[0] === 0 && (b[1]! & 0x80) === 0) b = b.subarray(1);
  if (b[0]! & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return sshString(b);
}

/** Generate an RSA key pair as Nova does: OpenSSH public key, PEM (PKCS#1) private key. */
export async function generateSshKeypair(): Promise<{ publicKey: string; privateKey: string }> {
  const { publicKey, privateKey } = await generate('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  const blob = Buffer.concat([
    sshString(Buffer.from('ssh-rsa')),
    mpint(Buffer.from(jwk.e!, 'base64url')),
    mpint(Buffer.from(jwk.n!, 'base64url')),
  ]);
  return {
    publicKey: `ssh-rsa ${blob.toString('base64')} Generated-by-Nova`,
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs1' }).toString(),
  };
}

const KEY_TYPES = new Set([
  'ssh-rsa',
  'ssh-dss',
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
]);

/** Nova's MD5 fingerprint of an OpenSSH public key; InputError when the key is not one. */
export function fingerprint(publicKey: string): string {
  const parts = publicKey.trim().split(/\s+/);
  const [type, data] = parts;
  const invalid = new InputError('Keypair data is invalid: failed to generate fingerprint');
  if (!type || !data || !KEY_TYPES.has(type) || !/^[A-Za-z0-9+/]+={0,3}$/.test(data)) throw invalid;
  const blob = Buffer.from(data, 'base64');
  if (blob.length < 4) throw invalid;
  const len = blob.readUInt32BE(0);
  if (blob.subarray(4, 4 + len).toString() !== type) throw invalid;
  const md5 = createHash('md5').update(blob).digest('hex');
  return md5.match(/../g)!.join(':');
}

const KeypairCreate = z.object({
  name: z.string().min(1).max(255),
  public_key: z.string().optional(),
  type: z.enum(['ssh', 'x509']).optional(),
  user_id: z.string().optional(),
});

function notFound(name: string, userId: string): NotFoundError {
  return new NotFoundError(`Keypair ${name} not found for user ${userId}`);
}

/** The user whose keypairs a call acts on: the caller, or (admins, 2.10+) `user_id`. */
function targetUser(req: Parameters<typeof callerOf>[0], caller: Caller, fromBody?: string): string {
  const wanted = fromBody ?? q(req, 'user_id');
  if (wanted === undefined || wanted === caller.userId || minorOf(req) < 10) return caller.userId;
  if (!caller.isAdmin)
    throw new NotAllowedError(`Policy doesn't allow os_compute_api:os-keypairs:index to be performed.`);
  return wanted;
}

/** Nova keypairs: per user, as in the real Nova. */
export function registerKeypairRoutes(r: ServiceRoutes, ctx: CloudContext): void {
  const repos = ctx.repos;

  const brief = (row: Row<Keypair>, minor: number) => ({
    name: row.rec.name,
    public_key: row.rec.public_key,
    fingerprint: row.rec.fingerprint,
    ...(minor >= 2 ? { type: row.rec.type } : {}),
  });

  r.get('/os-keypairs', 'keypairs.list', async (req) => {
    const caller = callerOf(req);
    const minor = minorOf(req);
    const user = targetUser(req, caller);
    let rows = await repos.keypairs.list({ project: user });
    rows.sort((a, b) => (a.rec.name < b.rec.name ? -1 : a.rec.name > b.rec.name ? 1 : 0));
    const body: Record<string, unknown> = {};
    if (minor >= 35) {
      const marker = q(req, 'marker');
      if (marker !== undefined) {
        const i = rows.findIndex((x) => x.rec.name === marker);
        if (i < 0) throw new InputError(`Marker ${marker} could not be found.`);
        rows = rows.slice(i + 1);
      }
      const limit = q(req, 'limit');
      if (limit !== undefined) {
        const n = Number(limit);
        if (rows.length > n) {
          rows = rows.slice(0, n);
          body.keypairs_links = [
            {
              rel: 'next',
              href: `${req.url.split('?')[0]}?limit=${n}&marker=${rows[rows.length - 1]!.rec.name}`,
            },
          ];
        }
      }
    }
    body.keypairs = rows.map((x) => ({ keypair: brief(x, minor) }));
    return body;
  });

  r.get('/os-keypairs/:name', 'keypairs.show', async (req) => {
    const caller = callerOf(req);
    const user = targetUser(req, caller);
    const row = await repos.keypairs.get(user, p(req, 'name'));
    if (!row) throw notFound(p(req, 'name'), user);
    return {
      keypair: {
        ...brief(row, minorOf(req)),
        user_id: row.rec.user_id,
        id: row.rec.kid,
        created_at: isoMicros(row.rec.created_at),
        updated_at: null,
        deleted: false,
        deleted_at: null,
      },
    };
  });

  r.post('/os-keypairs', 'keypairs.create', async (req, reply) => {
    const caller = callerOf(req);
    const minor = minorOf(req);
    const b = parseNovaBody(bodyOf(req), 'keypair', KeypairCreate);
    const user = targetUser(req, caller, b.user_id);
    const name = b.name;
    if (!/^[a-zA-Z0-9 _.@-]+$/.test(name) || name.trim() !== name) {
      throw new InputError('Keypair data is invalid: Keypair name contains unsafe characters');
    }
    const type = minor >= 2 ? (b.type ?? 'ssh') : 'ssh';
    if (type === 'x509')
      throw new InputError('Keypair data is invalid: x509 keypairs are not supported by the embedded cloud');
    const limit = await ctx.quotas.limit(caller.project, 'compute', 'key_pairs');
    if (limit >= 0 && (await repos.keypairs.count(user)) >= limit) {
      throw new NotAllowedError('Quota exceeded, too many key pairs.', { code: 'QuotaExceeded' });
    }
    if (await repos.keypairs.get(user, name)) throw new ConflictError(`Key pair '${name}' already exists.`);
    let publicKey = b.public_key?.trim();
    let privateKey: string | undefined;
    if (publicKey === undefined || publicKey === '') {
      const gen = await generateSshKeypair();
      publicKey = gen.publicKey;
      privateKey = gen.privateKey;
    }
    const rec: Keypair = {
      name,
      public_key: publicKey,
      fingerprint: fingerprint(publicKey),
      type,
      user_id: user,
      kid: Math.floor(Math.random() * 2 ** 31),
      created_at: nowIso(ctx),
    };
    try {
      await repos.keypairs.create(user, name, rec, { uid: null });
    } catch (err) {
      if (err instanceof ConflictError) throw new ConflictError(`Key pair '${name}' already exists.`);
      throw err;
    }
    void reply.code(minor >= 2 ? 201 : 200);
    return {
      keypair: {
        name,
        public_key: publicKey,
        fingerprint: rec.fingerprint,
        user_id: user,
        ...(minor >= 2 ? { type } : {}),
        ...(privateKey ? { private_key: privateKey } : {}),
      },
    };
  });

  r.delete('/os-keypairs/:name', 'keypairs.delete', async (req, reply) => {
    const caller = callerOf(req);
    const user = targetUser(req, caller);
    const row = await repos.keypairs.get(user, p(req, 'name'));
    if (!row) throw notFound(p(req, 'name'), user);
    await repos.keypairs.remove(row);
    return reply.code(minorOf(req) >= 2 ? 204 : 202).send();
  });
}
