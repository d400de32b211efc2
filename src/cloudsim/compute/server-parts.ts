import { z } from 'zod';
import { ConflictError, InputError, NotAllowedError, NotFoundError } from '../../domain/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import { bodyOf, callerOf, p, type ServiceRoutes } from '../core/http.ts';
import { minorOf } from '../core/microversion.ts';
import type { Server } from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import type { NetworkService } from '../network/index.ts';
import type { VolumeService } from '../volume/service.ts';
import { parseNovaBody } from './body.ts';
import { loadServer } from './servers.ts';

const Meta = z.record(z.string().min(1).max(255), z.string().max(255));

/** Server metadata, tags, interfaces, volume attachments and security groups. */
export function registerServerPartRoutes(
  r: ServiceRoutes,
  ctx: CloudContext,
  net: NetworkService,
  vol: VolumeService,
): void {
  const repos = ctx.repos;
  const touch = (rec: Server): Server => ({ ...rec, updated_at: nowIso(ctx) });
  const metaLimit = async (project: string, n: number) => {
    const limit = await ctx.quotas.limit(project, 'compute', 'metadata_items');
    if (limit >= 0 && n > limit)
      throw new NotAllowedError(
        `Quota exceeded for metadata_items: Requested ${n}, but already used 0 of ${limit} metadata_items`,
      );
  };

  // --- metadata ---
  r.get('/servers/:id/metadata', 'servers.metadata.list', async (req) => ({
    metadata: (await loadServer(ctx, callerOf(req), p(req, 'id'))).rec.metadata,
  }));
  for (const method of ['post', 'put'] as const) {
    r[method](
      '/servers/:id/metadata',
      method === 'post' ? 'servers.metadata.update' : 'servers.metadata.replace',
      async (req) => {
        const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
        const metadata = parseNovaBody(bodyOf(req), 'metadata', Meta);
        const merged = method === 'post' ? { ...s.rec.metadata, ...metadata } : metadata;
        await metaLimit(s.project, Object.keys(merged).length);
        const row = await repos.servers.mutate(s.project, s.id, (cur) =>
          touch({
            ...cur.rec,
            metadata: method === 'post' ? { ...cur.rec.metadata, ...metadata } : metadata,
          }),
        );
        return { metadata: row.rec.metadata };
      },
    );
  }
  r.get('/servers/:id/metadata/:key', 'servers.metadata.show', async (req) => {
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    const v = s.rec.metadata[p(req, 'key')];
    if (v === undefined) throw new NotFoundError('Metadata item was not found');
    return { meta: { [p(req, 'key')]: v } };
  });
  r.put('/servers/:id/metadata/:key', 'servers.metadata.set', async (req) => {
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    const meta = parseNovaBody(bodyOf(req), 'meta', Meta);
    const key = p(req, 'key');
    if (Object.keys(meta).length !== 1 || meta[key] === undefined)
      throw new InputError('Request body and URI mismatch');
    await metaLimit(s.project, Object.keys({ ...s.rec.metadata, ...meta }).length);
    await repos.servers.mutate(s.project, s.id, (cur) =>
      touch({ ...cur.rec, metadata: { ...cur.rec.metadata, ...meta } }),
    );
    return { meta };
  });
  r.delete('/servers/:id/metadata/:key', 'servers.metadata.delete', async (req, reply) => {
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    const key = p(req, 'key');
    if (s.rec.metadata[key] === undefined) throw new NotFoundError('Metadata item was not found');
    await repos.servers.mutate(s.project, s.id, (cur) => {
      const metadata = { ...cur.rec.metadata };
      delete metadata[key];
      return touch({ ...cur.rec, metadata });
    });
    return reply.code(204).send();
  });

  // --- tags (2.26+) ---
  const needTags = (req: Parameters<typeof minorOf>[0]) => {
    if (minorOf(req) < 26) throw new NotFoundError('The resource could not be found.');
  };
  const checkTag = (t: string) => {
    if (t.length < 1 || t.length > 60 || t.includes(',') || t.includes('/'))
      throw new InputError(`Invalid input for field/attribute tag. Value: ${t}.`);
    return t;
  };
  r.get('/servers/:id/tags', 'servers.tags.list', async (req) => {
    needTags(req);
    return { tags: (await loadServer(ctx, callerOf(req), p(req, 'id'))).rec.tags };
  });
  r.put('/servers/:id/tags', 'servers.tags.replace', async (req) => {
    needTags(req);
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    const b = z.object({ tags: z.array(z.string()).max(50) }).safeParse(bodyOf(req));
    if (!b.success)
      throw new InputError(
        `Invalid input for field/attribute tags. Value: None. 'tags' is a required property`,
      );
    const tags = [...new Set(b.data.tags.map(checkTag))];
    await repos.servers.mutate(s.project, s.id, (cur) => touch({ ...cur.rec, tags }));
    return { tags };
  });
  r.delete('/servers/:id/tags', 'servers.tags.clear', async (req, reply) => {
    needTags(req);
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    await repos.servers.mutate(s.project, s.id, (cur) => touch({ ...cur.rec, tags: [] }));
    return reply.code(204).send();
  });
  r.get('/servers/:id/tags/:tag', 'servers.tags.check', async (req, reply) => {
    needTags(req);
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    if (!s.rec.tags.includes(p(req, 'tag')))
      throw new NotFoundError(`Tag '${p(req, 'tag')}' could not be found for server ${s.id}`);
    return reply.code(204).send();
  });
  r.put('/servers/:id/tags/:tag', 'servers.tags.add', async (req, reply) => {
    needTags(req);
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    const tag = checkTag(p(req, 'tag'));
    if (s.rec.tags.includes(tag)) return reply.code(204).send();
    if (s.rec.tags.length >= 50) throw new InputError(`The number of tags exceeded the per-server limit 50`);
    await repos.servers.mutate(s.project, s.id, (cur) =>
      touch({ ...cur.rec, tags: [...new Set([...cur.rec.tags, tag])] }),
    );
    return reply.code(201).header('location', req.url).send();
  });
  r.delete('/servers/:id/tags/:tag', 'servers.tags.remove', async (req, reply) => {
    needTags(req);
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    const tag = p(req, 'tag');
    if (!s.rec.tags.includes(tag))
      throw new NotFoundError(`Tag '${tag}' could not be found for server ${s.id}`);
    await repos.servers.mutate(s.project, s.id, (cur) =>
      touch({ ...cur.rec, tags: cur.rec.tags.filter((t) => t !== tag) }),
    );
    return reply.code(204).send();
  });

  // --- interfaces ---
  const attachmentView = async (
    req: Parameters<typeof minorOf>[0],
    s: Row<Server>,
    ref: Server['ports'][number],
  ) => {
    const port = await repos.ports.find(ref.port_id);
    return {
      port_id: ref.port_id,
      net_id: ref.network_id,
      mac_addr: port?.rec.mac_address ?? '',
      port_state: port?.rec.status ?? 'DOWN',
      fixed_ips: port?.rec.fixed_ips ?? [],
      ...(minorOf(req) >= 70 ? { tag: ref.tag } : {}),
    };
  };
  r.get('/servers/:id/os-interface', 'servers.interfaces.list', async (req) => {
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    const out = [];
    for (const ref of s.rec.ports)
      if (await repos.ports.find(ref.port_id)) out.push(await attachmentView(req, s, ref));
    return { interfaceAttachments: out };
  });
  r.get('/servers/:id/os-interface/:port', 'servers.interfaces.show', async (req) => {
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    const ref = s.rec.ports.find((x) => x.port_id === p(req, 'port'));
    if (!ref) throw new NotFoundError(`Port ${p(req, 'port')} is not attached`);
    return { interfaceAttachment: await attachmentView(req, s, ref) };
  });
  r.post('/servers/:id/os-interface', 'servers.interfaces.attach', async (req) => {
    const caller = callerOf(req);
    const s = await loadServer(ctx, caller, p(req, 'id'));
    if (!['active', 'stopped', 'paused'].includes(s.rec.vm_state) || s.rec.task_state) {
      throw new ConflictError(
        `Cannot 'attach_interface' instance ${s.id} while it is in vm_state ${s.rec.vm_state}`,
      );
    }
    const b = parseNovaBody(
      bodyOf(req),
      'interfaceAttachment',
      z.object({
        net_id: z.string().optional(),
        port_id: z.string().optional(),
        fixed_ips: z
          .array(z.object({ ip_address: z.string() }))
          .max(1)
          .optional(),
        tag: z.string().optional(),
      }),
    );
    let ref: Server['ports'][number];
    if (b.port_id) {
      const port = await repos.ports.find(b.port_id);
      if (!port || (!caller.isAdmin && port.rec.tenant_id !== s.project))
        throw new NotFoundError(`Port id ${b.port_id} could not be found.`);
      if (port.rec.device_id) throw new ConflictError(`Port ${b.port_id} is still in use.`);
      const rec = {
        ...port.rec,
        device_id: s.id,
        device_owner: `compute:${s.rec.availability_zone}`,
        binding_host_id: s.rec.host,
        status: 'ACTIVE',
        updated_at: nowIso(ctx),
      };
      await repos.ports.update(port, rec);
      ref = { port_id: port.id, network_id: port.rec.network_id, created_by_nova: false, tag: b.tag ?? null };
    } else {
      const networks = b.net_id
        ? [await repos.networks.find(b.net_id)]
        : (await repos.networks.list({ project: s.project })).filter((n) => !n.rec.external);
      if (networks.length !== 1 || !networks[0]) {
        if (b.net_id) throw new NotFoundError(`Network ${b.net_id} could not be found.`);
        throw new ConflictError(
          'More than one possible network found. Specify network ID(s) to select which one(s) to connect to.',
        );
      }
      const network = networks[0];
      const port = await net.createPort({
        project: s.project,
        tenantId: s.project,
        network,
        deviceId: s.id,
        deviceOwner: `compute:${s.rec.availability_zone}`,
        hostId: s.rec.host,
        ...(b.fixed_ips?.[0] ? { fixedIps: [{ ip_address: b.fixed_ips[0].ip_address }] } : {}),
      });
      await net.updatePort(port, { status: 'ACTIVE' });
      ref = { port_id: port.id, network_id: network.id, created_by_nova: true, tag: b.tag ?? null };
    }
    await repos.servers.mutate(s.project, s.id, (cur) =>
      touch({ ...cur.rec, ports: [...cur.rec.ports, ref] }),
    );
    return { interfaceAttachment: await attachmentView(req, s, ref) };
  });
  r.delete('/servers/:id/os-interface/:port', 'servers.interfaces.detach', async (req, reply) => {
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    const ref = s.rec.ports.find((x) => x.port_id === p(req, 'port'));
    if (!ref) throw new NotFoundError(`Port ${p(req, 'port')} is not attached`);
    const port = await repos.ports.find(ref.port_id);
    if (port) {
      if (ref.created_by_nova) await net.deletePort(port);
      else
        await net.updatePort(port, { device_id: '', device_owner: '', binding_host_id: '', status: 'DOWN' });
    }
    await repos.servers.mutate(s.project, s.id, (cur) =>
      touch({ ...cur.rec, ports: cur.rec.ports.filter((x) => x.port_id !== ref.port_id) }),
    );
    return reply.code(202).send();
  });

  // --- volume attachments ---
  const volAttachment = (
    req: Parameters<typeof minorOf>[0],
    s: Row<Server>,
    ref: Server['volumes'][number],
  ) => ({
    id: ref.volume_id,
    volumeId: ref.volume_id,
    serverId: s.id,
    device: ref.device,
    ...(minorOf(req) >= 70 ? { tag: ref.tag } : {}),
    ...(minorOf(req) >= 79 ? { delete_on_termination: ref.delete_on_termination } : {}),
  });
  r.get('/servers/:id/os-volume_attachments', 'servers.volume_attachments.list', async (req) => {
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    return { volumeAttachments: s.rec.volumes.map((v) => volAttachment(req, s, v)) };
  });
  r.get('/servers/:id/os-volume_attachments/:volume', 'servers.volume_attachments.show', async (req) => {
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    const ref = s.rec.volumes.find((v) => v.volume_id === p(req, 'volume'));
    if (!ref) throw new NotFoundError(`Volume ${p(req, 'volume')} is not attached to server ${s.id}`);
    return { volumeAttachment: volAttachment(req, s, ref) };
  });
  r.post('/servers/:id/os-volume_attachments', 'servers.volume_attachments.create', async (req) => {
    const caller = callerOf(req);
    const s = await loadServer(ctx, caller, p(req, 'id'));
    const b = parseNovaBody(
      bodyOf(req),
      'volumeAttachment',
      z.object({
        volumeId: z.string(),
        device: z.string().nullable().optional(),
        tag: z.string().optional(),
        delete_on_termination: z.boolean().optional(),
      }),
    );
    if (!['active', 'stopped', 'paused'].includes(s.rec.vm_state) || s.rec.task_state) {
      throw new ConflictError(
        `Cannot 'attach_volume' instance ${s.id} while it is in vm_state ${s.rec.vm_state}`,
      );
    }
    const v = await vol.get(caller, s.project, b.volumeId).catch(() => {
      throw new NotFoundError(`Volume ${b.volumeId} could not be found.`);
    });
    if (s.rec.volumes.some((x) => x.volume_id === v.id))
      throw new ConflictError(`volume ${v.id} already attached`);
    if (v.rec.status !== 'available' && !(v.rec.multiattach && v.rec.status === 'in-use')) {
      throw new InputError(
        `Invalid volume: volume '${v.id}' status must be 'available'. Currently in '${v.rec.status}'`,
      );
    }
    if (v.rec.availability_zone !== s.rec.availability_zone && v.rec.availability_zone !== 'nova') {
      throw new InputError(
        `Server and volumes are not in the same availability zone. Server is in: ${s.rec.availability_zone}. Volumes are in: ${v.rec.availability_zone}`,
      );
    }
    const used = new Set(s.rec.volumes.map((x) => x.device));
    let device = b.device ?? '';
    if (!device)
      for (const l of 'bcdefghijklmnopqrstuvwxyz')
        if (!used.has(`/dev/vd${l}`)) {
          device = `/dev/vd${l}`;
          break;
        }
    const ref = {
      volume_id: v.id,
      delete_on_termination: b.delete_on_termination ?? false,
      boot_index: null,
      device,
      tag: b.tag ?? null,
    };
    await ctx.store.commit([
      repos.volumes.updateOp(v, vol.attached(v.rec, s.id, device)),
      repos.servers.updateOp(s, touch({ ...s.rec, volumes: [...s.rec.volumes, ref] })),
    ]);
    return { volumeAttachment: volAttachment(req, s, ref) };
  });
  r.delete(
    '/servers/:id/os-volume_attachments/:volume',
    'servers.volume_attachments.delete',
    async (req, reply) => {
      const caller = callerOf(req);
      const s = await loadServer(ctx, caller, p(req, 'id'));
      const ref = s.rec.volumes.find((v) => v.volume_id === p(req, 'volume'));
      if (!ref) throw new NotFoundError(`Volume ${p(req, 'volume')} is not attached to server ${s.id}`);
      if (ref.boot_index === 0) throw new InputError(`Cannot detach a root device volume`);
      const v = await repos.volumes.find(ref.volume_id);
      await ctx.store.commit([
        ...(v ? [repos.volumes.updateOp(v, vol.detached(v.rec, s.id))] : []),
        repos.servers.updateOp(
          s,
          touch({ ...s.rec, volumes: s.rec.volumes.filter((x) => x.volume_id !== ref.volume_id) }),
        ),
      ]);
      return reply.code(202).send();
    },
  );

  // --- security groups of a server ---
  r.get('/servers/:id/os-security-groups', 'servers.security_groups.list', async (req) => {
    const s = await loadServer(ctx, callerOf(req), p(req, 'id'));
    const ids = new Set<string>();
    for (const ref of s.rec.ports)
      for (const id of (await repos.ports.find(ref.port_id))?.rec.security_groups ?? []) ids.add(id);
    const out = [];
    for (const id of ids) {
      const sg = await repos.securityGroups.find(id);
      if (!sg) continue;
      const rules = await net.rulesOf(sg);
      out.push({
        id: sg.id,
        name: sg.rec.name,
        description: sg.rec.description,
        tenant_id: sg.project,
        rules: rules
          .filter((x) => x.rec.direction === 'ingress')
          .map((x) => ({
            id: x.id,
            parent_group_id: sg.id,
            ip_protocol: x.rec.protocol,
            from_port: x.rec.port_range_min,
            to_port: x.rec.port_range_max,
            ip_range: x.rec.remote_ip_prefix ? { cidr: x.rec.remote_ip_prefix } : {},
            group: x.rec.remote_group_id ? { name: sg.rec.name, tenant_id: sg.project } : {},
          })),
      });
    }
    return { security_groups: out };
  });
}
