import type { FastifyInstance } from 'fastify';
import {
  InputError,
  NotAllowedError,
  UnavailableError,
  capiClusterName,
  type CaKind,
  type ClusterPki,
  type MagnumClusterObject,
  type PkiClusterRef,
} from '../../../domain/index.ts';
import { requireRole, stateOf, type Caller, type Env } from '../context.ts';
import { findCluster } from '../lookup.ts';
import { requireVersion } from '../microversion.ts';
import { param, type Query } from '../pagination.ts';
import { CertificateSignSchema, parseBody } from '../schemas.ts';
import { links } from '../wire.ts';
import { requireStatus, retryOnConflict, withOperation } from '../writes.ts';

/**
 * `/v1/certificates`: the cluster CA (`GET`), signing a client CSR (`POST`, 201) and CA rotation
 * (`PATCH`, ≥1.5, 202). As Magnum's policy says, only the cluster's creator or an admin may
 * fetch the CA or have a CSR signed.
 */

/** The PKI reference of a Magnum cluster. */
export function pkiRef(c: MagnumClusterObject): PkiClusterRef {
  return { namespace: c.metadata.namespace, name: capiClusterName(c), displayName: c.metadata.name };
}

function pkiOf(env: Env): ClusterPki {
  if (!env.deps.pki) {
    throw new UnavailableError('The certificate service is not available yet; retry later.', {
      code: 'CertificatesUnavailable',
    });
  }
  return env.deps.pki;
}

function requireCreatorOrAdmin(
  caller: Caller,
  c: MagnumClusterObject,
  rule: string,
  role: 'reader' | 'member',
): void {
  requireRole(caller, role, rule);
  if (!caller.isAdmin && caller.userId !== c.spec.userId) {
    throw new NotAllowedError(
      `Policy doesn't allow ${rule} to be performed: only the user who created cluster ${c.metadata.name} (or an administrator) may fetch its CA or have certificates signed; use that user's credentials (the project's service account).`,
      { code: 'PolicyNotAuthorized' },
    );
  }
}

function caKind(raw: string | undefined): CaKind {
  switch (raw) {
    case undefined:
    case '':
    case 'kubernetes':
      return 'kubernetes';
    case 'etcd':
      return 'etcd';
    case 'front_proxy':
    case 'front-proxy':
      return 'front_proxy';
    default:
      throw new InputError(
        `Invalid input for field/attribute ca_cert_type: value should be one of kubernetes, etcd, front_proxy (got '${raw}').`,
        {
          code: 'Invalid',
        },
      );
  }
}

export function certificateRoutes(app: FastifyInstance, env: Env): void {
  app.get<{ Params: { ident: string } }>('/certificates/:ident', async (req) => {
    const { caller } = stateOf(req);
    const kind = caKind(param(req.query as Query, 'ca_cert_type'));
    const cluster = await findCluster(env, caller, req.params.ident, false);
    requireCreatorOrAdmin(caller, cluster, 'certificate:get', 'reader');
    const pem = await pkiOf(env).caPem(pkiRef(cluster), kind);
    return {
      cluster_uuid: cluster.metadata.uid,
      pem,
      links: links(env.deps.baseUrl(), 'certificates', cluster.metadata.uid),
    };
  });

  app.post('/certificates', async (req, reply) => {
    const { caller } = stateOf(req);
    requireRole(caller, 'member', 'certificate:create');
    const body = parseBody(CertificateSignSchema, req.body, 'certificate');
    let cluster: MagnumClusterObject;
    try {
      cluster = await findCluster(env, caller, body.cluster_uuid, false);
    } catch (err) {
      // Magnum answers an unknown cluster in a sign request with 400.
      if (err instanceof Error && 'status' in err && err.status === 404) {
        throw new InputError(`Cluster ${body.cluster_uuid} could not be found.`, { code: 'ClusterNotFound' });
      }
      throw err;
    }
    requireCreatorOrAdmin(caller, cluster, 'certificate:create', 'member');
    const pem = await pkiOf(env).signCsr(pkiRef(cluster), body.csr, { allowSystemMasters: true });
    return reply.code(201).send({
      cluster_uuid: cluster.metadata.uid,
      csr: body.csr,
      pem,
      links: links(env.deps.baseUrl(), 'certificates', cluster.metadata.uid),
    });
  });

  app.patch<{ Params: { ident: string } }>('/certificates/:ident', async (req, reply) => {
    const { caller, version } = stateOf(req);
    requireVersion(version, 5, 'PATCH /v1/certificates/{cluster}');
    requireRole(caller, 'member', 'certificate:rotate_ca');
    const pki = pkiOf(env);
    const cluster = await findCluster(env, caller, req.params.ident, false, true);
    const template = env.model.templates.get(cluster.spec.clusterTemplateId);
    if (template?.spec.tlsDisabled) {
      throw new InputError('Rotating the CA certificate on a non-TLS cluster is not supported.', {
        code: 'NotSupported',
      });
    }
    requireStatus(cluster, 'complete', 'Rotating the CA of');
    await pki.rotateCa(pkiRef(cluster));
    // The control plane and nodes must pick up the new CA: an UPDATE operation for the driver.
    await retryOnConflict(async () => {
      const fresh = await findCluster(env, caller, cluster.metadata.uid, false, true);
      const now = new Date(env.deps.clock.now()).toISOString();
      await env.store.update(withOperation(fresh, 'UPDATE', now));
    });
    const uuid = cluster.metadata.uid;
    return reply.code(202).send({ uuid });
  });
}
