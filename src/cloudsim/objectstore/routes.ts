import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { ConflictError, InputError, NotAllowedError, NotFoundError } from '../../domain/index.ts';
import { Blobs } from '../core/blobs.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import { CloudHttpError } from '../core/errors.ts';
import { callerOf, p, q, type ServiceRoutes } from '../core/http.ts';
import type { Container, StoredObject } from '../core/records.ts';
import type { Row } from '../core/repo.ts';

/** Largest object accepted in one PUT (Swift's default `max_file_size` is 5 GiB; ours is bounded by memory). */
export const MAX_OBJECT_BYTES = 256 * 1024 * 1024;

function ts(iso: string): string {
  return (Date.parse(iso) / 1000).toFixed(5);
}

function httpDate(iso: string): string {
  return new Date(iso).toUTCString();
}

function lastModified(iso: string): string {
  return `${iso.slice(0, 23)}000`;
}

function metaHeaders(prefix: string, headers: FastifyRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (k.startsWith(prefix) && typeof v === 'string') out[k.slice(prefix.length)] = v;
  }
  return out;
}

function removedMeta(prefix: string, headers: FastifyRequest['headers']): string[] {
  return Object.keys(headers)
    .filter((k) => k.startsWith(prefix))
    .map((k) => k.slice(prefix.length));
}

function wantsJson(req: FastifyRequest): boolean {
  const format = q(req, 'format');
  if (format) return format === 'json';
  return String(req.headers.accept ?? '').includes('application/json');
}

/** A small Swift (object-store v1): account, containers, objects with md5 ETags, metadata headers. */
export function registerObjectRoutes(r: ServiceRoutes, ctx: CloudContext): void {
  const repos = ctx.repos;
  const blobs = new Blobs(repos);

  const account = (req: FastifyRequest): string => {
    const caller = callerOf(req);
    const project = p(req, 'account').replace(/^AUTH_/, '');
    if (project !== caller.project && !caller.isAdmin) throw new NotAllowedError('Forbidden');
    return project;
  };

  async function container(project: string, name: string): Promise<Row<Container>> {
    const row = await repos.containers.get(project, name);
    if (!row) throw new NotFoundError('The resource could not be found.');
    return row;
  }
  const objectsOf = (project: string, name: string) =>
    repos.objects.list({ project, labels: { container: name } });
  const objectName = (req: FastifyRequest) => (req.params as Record<string, string>)['*'] ?? '';

  async function accountStats(project: string) {
    const cs = await repos.containers.list({ project });
    const objs = await repos.objects.list({ project });
    return { cs, objects: objs.length, bytes: objs.reduce((n, o) => n + o.rec.size, 0), objs };
  }

  const accountHeaders = (reply: FastifyReply, s: Awaited<ReturnType<typeof accountStats>>) =>
    reply
      .header('x-account-container-count', String(s.cs.length))
      .header('x-account-object-count', String(s.objects))
      .header('x-account-bytes-used', String(s.bytes))
      .header('x-timestamp', ts(nowIso(ctx)));

  r.head('/v1/:account', 'account.head', async (req, reply) =>
    accountHeaders(reply, await accountStats(account(req)))
      .code(204)
      .send(),
  );
  r.get('/v1/:account', 'account.list', async (req, reply) => {
    const s = await accountStats(account(req));
    accountHeaders(reply, s);
    const list = s.cs
      .map((c) => {
        const objs = s.objs.filter((o) => o.rec.container === c.rec.name);
        return {
          name: c.rec.name,
          count: objs.length,
          bytes: objs.reduce((n, o) => n + o.rec.size, 0),
          last_modified: lastModified(c.rec.updated_at),
        };
      })
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    if (wantsJson(req))
      return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(list));
    if (list.length === 0) return reply.code(204).send();
    return reply
      .code(200)
      .type('text/plain; charset=utf-8')
      .send(list.map((c) => c.name).join('\n') + '\n');
  });

  const containerHeaders = async (reply: FastifyReply, c: Row<Container>) => {
    const objs = await objectsOf(c.project, c.rec.name);
    void reply
      .header('x-container-object-count', String(objs.length))
      .header('x-container-bytes-used', String(objs.reduce((n, o) => n + o.rec.size, 0)))
      .header('x-timestamp', ts(c.rec.created_at))
      .header('last-modified', httpDate(c.rec.updated_at))
      .header('x-storage-policy', 'Policy-0');
    for (const [k, v] of Object.entries(c.rec.metadata)) void reply.header(`x-container-meta-${k}`, v);
    if (c.rec.read_acl) void reply.header('x-container-read', c.rec.read_acl);
    if (c.rec.write_acl) void reply.header('x-container-write', c.rec.write_acl);
    return objs;
  };

  r.put('/v1/:account/:container', 'containers.create', async (req, reply) => {
    const project = account(req);
    const name = p(req, 'container');
    if (name.length > 256 || name.includes('/'))
      throw new InputError('Container name length of 257 longer than 256');
    const existing = await repos.containers.get(project, name);
    const now = nowIso(ctx);
    const meta = metaHeaders('x-container-meta-', req.headers);
    const read =
      typeof req.headers['x-container-read'] === 'string' ? req.headers['x-container-read'] : undefined;
    const write =
      typeof req.headers['x-container-write'] === 'string' ? req.headers['x-container-write'] : undefined;
    if (existing) {
      await repos.containers.mutate(project, name, (cur) => ({
        ...cur.rec,
        metadata: { ...cur.rec.metadata, ...meta },
        ...(read !== undefined ? { read_acl: read } : {}),
        ...(write !== undefined ? { write_acl: write } : {}),
        updated_at: now,
      }));
      return reply.code(202).send();
    }
    try {
      await repos.containers.create(
        project,
        name,
        {
          name,
          metadata: meta,
          read_acl: read ?? null,
          write_acl: write ?? null,
          created_at: now,
          updated_at: now,
        },
        { uid: null },
      );
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      return reply.code(202).send();
    }
    return reply.code(201).send();
  });

  r.head('/v1/:account/:container', 'containers.head', async (req, reply) => {
    const c = await container(account(req), p(req, 'container'));
    await containerHeaders(reply, c);
    return reply.code(204).send();
  });

  r.post('/v1/:account/:container', 'containers.update', async (req, reply) => {
    const c = await container(account(req), p(req, 'container'));
    const set = metaHeaders('x-container-meta-', req.headers);
    const removed = removedMeta('x-remove-container-meta-', req.headers);
    await repos.containers.mutate(c.project, c.id, (cur) => {
      const metadata = { ...cur.rec.metadata, ...set };
      for (const k of removed) delete metadata[k];
      for (const [k, v] of Object.entries(set)) if (v === '') delete metadata[k];
      return { ...cur.rec, metadata, updated_at: nowIso(ctx) };
    });
    return reply.code(204).send();
  });

  r.delete('/v1/:account/:container', 'containers.delete', async (req, reply) => {
    const c = await container(account(req), p(req, 'container'));
    if ((await objectsOf(c.project, c.rec.name)).length > 0) {
      throw new ConflictError('There was a conflict when trying to complete your request.');
    }
    await repos.containers.remove(c);
    return reply.code(204).send();
  });

  r.get('/v1/:account/:container', 'containers.list', async (req, reply) => {
    const c = await container(account(req), p(req, 'container'));
    let objs = (await containerHeaders(reply, c)).sort((a, b) => (a.rec.name < b.rec.name ? -1 : 1));
    const prefix = q(req, 'prefix');
    if (prefix) objs = objs.filter((o) => o.rec.name.startsWith(prefix));
    const marker = q(req, 'marker');
    if (marker) objs = objs.filter((o) => o.rec.name > marker);
    const endMarker = q(req, 'end_marker');
    if (endMarker) objs = objs.filter((o) => o.rec.name < endMarker);
    if (q(req, 'reverse') === 'true' || q(req, 'reverse') === 'on') objs.reverse();
    const limit = Math.min(Number(q(req, 'limit') ?? 10000), 10000);
    const delimiter = q(req, 'delimiter');
    const entries: ({ subdir: string } | Row<StoredObject>)[] = [];
    const seen = new Set<string>();
    for (const o of objs) {
      if (delimiter) {
        const rest = o.rec.name.slice((prefix ?? '').length);
        const i = rest.indexOf(delimiter);
        if (i >= 0) {
          const subdir = (prefix ?? '') + rest.slice(0, i + delimiter.length);
          if (!seen.has(subdir)) {
            seen.add(subdir);
            entries.push({ subdir });
          }
          continue;
        }
      }
      entries.push(o);
    }
    const page = entries.slice(0, limit);
    if (wantsJson(req)) {
      const json = page.map((e) =>
        'subdir' in e
          ? e
          : {
              name: e.rec.name,
              hash: e.rec.etag,
              bytes: e.rec.size,
              content_type: e.rec.content_type,
              last_modified: lastModified(e.rec.last_modified),
            },
      );
      return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(json));
    }
    if (page.length === 0) return reply.code(204).send();
    return reply
      .code(200)
      .type('text/plain; charset=utf-8')
      .send(page.map((e) => ('subdir' in e ? e.subdir : e.rec.name)).join('\n') + '\n');
  });

  const objectHeaders = (reply: FastifyReply, o: Row<StoredObject>) => {
    void reply
      .header('etag', o.rec.etag)
      .header('content-type', o.rec.content_type)
      .header('last-modified', httpDate(o.rec.last_modified))
      .header('x-timestamp', ts(o.rec.last_modified))
      .header('accept-ranges', 'bytes');
    for (const [k, v] of Object.entries(o.rec.metadata)) void reply.header(`x-object-meta-${k}`, v);
  };

  async function object(req: FastifyRequest): Promise<Row<StoredObject>> {
    const project = account(req);
    const c = await container(project, p(req, 'container'));
    const row = await repos.objects.get(project, `${c.rec.name}/${objectName(req)}`);
    if (!row) throw new NotFoundError('The resource could not be found.');
    return row;
  }

  r.put(
    '/v1/:account/:container/*',
    'objects.create',
    async (req, reply) => {
      const project = account(req);
      const c = await container(project, p(req, 'container'));
      const name = objectName(req);
      if (name === '' || name.length > 1024) throw new InputError('Object name length invalid');
      const data = Buffer.isBuffer(req.body)
        ? req.body
        : Buffer.from(
            req.body === undefined ? '' : typeof req.body === 'string' ? req.body : JSON.stringify(req.body),
          );
      const etag = createHash('md5').update(data).digest('hex');
      const sent = req.headers.etag;
      if (typeof sent === 'string' && sent.replace(/"/g, '').toLowerCase() !== etag) {
        throw new CloudHttpError(422, 'Unprocessable Entity');
      }
      const existing = await repos.objects.get(project, `${c.rec.name}/${name}`);
      const { ref, ops } = blobs.writeOps(project, data);
      const now = nowIso(ctx);
      const rec: StoredObject = {
        container: c.rec.name,
        name,
        size: data.length,
        etag,
        content_type:
          typeof req.headers['content-type'] === 'string'
            ? req.headers['content-type']
            : 'application/octet-stream',
        metadata: metaHeaders('x-object-meta-', req.headers),
        blob: ref,
        last_modified: now,
      };
      if (existing) {
        ops.push(
          repos.objects.updateOp(existing, rec),
          ...(await blobs.deleteOps(project, existing.rec.blob)),
        );
      } else {
        ops.push(
          repos.objects.createOp(project, `${c.rec.name}/${name}`, rec, {
            uid: null,
            labels: { container: c.rec.name },
          }),
        );
      }
      await ctx.store.commit(ops);
      return reply.code(201).header('etag', etag).header('last-modified', httpDate(now)).send();
    },
    MAX_OBJECT_BYTES,
  );

  r.get('/v1/:account/:container/*', 'objects.show', async (req, reply) => {
    const o = await object(req);
    objectHeaders(reply, o);
    const data = await blobs.read(o.project, o.rec.blob);
    return reply.code(200).send(data);
  });

  r.head('/v1/:account/:container/*', 'objects.head', async (req, reply) => {
    const o = await object(req);
    objectHeaders(reply, o);
    return reply.code(200).header('content-length', String(o.rec.size)).send();
  });

  r.post('/v1/:account/:container/*', 'objects.update', async (req, reply) => {
    const o = await object(req);
    await repos.objects.mutate(o.project, o.id, (cur) => ({
      ...cur.rec,
      metadata: metaHeaders('x-object-meta-', req.headers),
      ...(typeof req.headers['content-type'] === 'string' && req.headers['content-type'] !== ''
        ? { content_type: req.headers['content-type'] }
        : {}),
    }));
    return reply.code(202).send();
  });

  r.delete('/v1/:account/:container/*', 'objects.delete', async (req, reply) => {
    const o = await object(req);
    await ctx.store.commit([repos.objects.deleteOp(o), ...(await blobs.deleteOps(o.project, o.rec.blob))]);
    return reply.code(204).send();
  });
}
