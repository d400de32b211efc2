import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CloudError,
  deleteIgnoringNotFound,
  isNotFound,
  isQuotaExceeded,
  Session,
  type CloudErrorKind,
} from '../../src/cloud/index.ts';
import { startFixture, type Reply } from './http-fixture.ts';

interface Case {
  name: string;
  reply: Reply & object;
  kind: CloudErrorKind;
  message: string;
  code?: string;
}

const glance404 = `<html>
 <head>
  <title>404 Not Found</title>
 </head>
 <body>
  <h1>404 Not Found</h1>
  No image found with ID 8a1b<br /><br />


 </body>
</html>`;

const CASES: Case[] = [
  {
    name: 'Nova itemNotFound',
    reply: {
      status: 404,
      body: { itemNotFound: { code: 404, message: 'Instance 9f3c could not be found.' } },
    },
    kind: 'not-found',
    message: 'Instance 9f3c could not be found.',
    code: 'itemNotFound',
  },
  {
    name: 'Nova quota on cores (403 forbidden)',
    reply: {
      status: 403,
      body: {
        forbidden: {
          code: 403,
          message: 'Quota exceeded for cores: Requested 4, but already used 18 of 20 cores',
        },
      },
    },
    kind: 'quota',
    message: 'Quota exceeded for cores: Requested 4, but already used 18 of 20 cores',
  },
  {
    name: 'Nova keypair quota',
    reply: {
      status: 403,
      body: { forbidden: { code: 403, message: 'Quota exceeded, too many key pairs.' } },
    },
    kind: 'quota',
    message: 'Quota exceeded, too many key pairs.',
  },
  {
    name: 'Nova relaying a Neutron port quota',
    reply: { status: 403, body: { forbidden: { code: 403, message: 'Maximum number of ports exceeded' } } },
    kind: 'quota',
    message: 'Maximum number of ports exceeded',
  },
  {
    name: 'older Nova 413 overLimit',
    reply: {
      status: 413,
      headers: { 'retry-after': '0' },
      body: {
        overLimit: {
          code: 413,
          message: 'Quota exceeded for instances: Requested 1, but already used 10 of 10 instances',
        },
      },
    },
    kind: 'quota',
    message: 'Quota exceeded for instances: Requested 1, but already used 10 of 10 instances',
  },
  {
    name: 'Nova policy refusal (not a quota)',
    reply: {
      status: 403,
      body: {
        forbidden: {
          code: 403,
          message: "Policy doesn't allow os_compute_api:servers:create:forced_host to be performed.",
        },
      },
    },
    kind: 'forbidden',
    message: "Policy doesn't allow os_compute_api:servers:create:forced_host to be performed.",
  },
  {
    name: 'Nova conflictingRequest',
    reply: {
      status: 409,
      body: {
        conflictingRequest: {
          code: 409,
          message: "Cannot 'delete' instance while it is in task_state spawning",
        },
      },
    },
    kind: 'conflict',
    message: "Cannot 'delete' instance while it is in task_state spawning",
  },
  {
    name: 'Neutron NetworkNotFound',
    reply: {
      status: 404,
      body: {
        NeutronError: { type: 'NetworkNotFound', message: 'Network 5e1 could not be found.', detail: '' },
      },
    },
    kind: 'not-found',
    message: 'Network 5e1 could not be found.',
    code: 'NetworkNotFound',
  },
  {
    name: 'Neutron OverQuota (409)',
    reply: {
      status: 409,
      body: {
        NeutronError: {
          type: 'OverQuota',
          message: "Quota exceeded for resources: ['floatingip'].",
          detail: '',
        },
      },
    },
    kind: 'quota',
    message: "Quota exceeded for resources: ['floatingip'].",
    code: 'OverQuota',
  },
  {
    name: 'Neutron SecurityGroupInUse (409 conflict)',
    reply: {
      status: 409,
      body: {
        NeutronError: { type: 'SecurityGroupInUse', message: 'Security Group 1a in use.', detail: '' },
      },
    },
    kind: 'conflict',
    message: 'Security Group 1a in use.',
    code: 'SecurityGroupInUse',
  },
  {
    name: 'Neutron FloatingIPPortAlreadyAssociated',
    reply: {
      status: 409,
      body: {
        NeutronError: {
          type: 'FloatingIPPortAlreadyAssociated',
          message:
            'Cannot associate floating IP 172.24.4.3 (f1) with port p1 using fixed IP 10.0.0.5, as that fixed IP already has a floating IP on external network e1.',
          detail: '',
        },
      },
    },
    kind: 'conflict',
    message:
      'Cannot associate floating IP 172.24.4.3 (f1) with port p1 using fixed IP 10.0.0.5, as that fixed IP already has a floating IP on external network e1.',
    code: 'FloatingIPPortAlreadyAssociated',
  },
  {
    name: 'Neutron bad request',
    reply: {
      status: 400,
      body: {
        NeutronError: {
          type: 'HTTPBadRequest',
          message: "Invalid input for cidr. Reason: '10.0.0.0/33' is not a valid IP subnet.",
          detail: '',
        },
      },
    },
    kind: 'bad-request',
    message: "Invalid input for cidr. Reason: '10.0.0.0/33' is not a valid IP subnet.",
    code: 'HTTPBadRequest',
  },
  {
    name: 'Octavia not found',
    reply: {
      status: 404,
      body: { faultcode: 'Client', faultstring: 'Load Balancer 7c could not be found.', debuginfo: null },
    },
    kind: 'not-found',
    message: 'Load Balancer 7c could not be found.',
  },
  {
    name: 'Octavia quota (403)',
    reply: {
      status: 403,
      body: {
        faultcode: 'Client',
        faultstring: 'Quota has been met for resources: Load Balancer',
        debuginfo: null,
      },
    },
    kind: 'quota',
    message: 'Quota has been met for resources: Load Balancer',
  },
  {
    name: 'Octavia immutable while pending (409)',
    reply: {
      status: 409,
      body: {
        faultcode: 'Client',
        faultstring: 'Load Balancer 7c is immutable and cannot be updated.',
        debuginfo: null,
      },
    },
    kind: 'conflict',
    message: 'Load Balancer 7c is immutable and cannot be updated.',
  },
  {
    name: 'Cinder volume count quota (413 overLimit)',
    reply: {
      status: 413,
      headers: { 'retry-after': '0' },
      body: {
        overLimit: {
          code: 413,
          message:
            "VolumeLimitExceeded: Maximum number of volumes allowed (10) exceeded for quota 'volumes'.",
        },
      },
    },
    kind: 'quota',
    message: "VolumeLimitExceeded: Maximum number of volumes allowed (10) exceeded for quota 'volumes'.",
    code: 'overLimit',
  },
  {
    name: 'Cinder gigabytes quota',
    reply: {
      status: 413,
      body: {
        overLimit: {
          code: 413,
          message:
            'VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed gigabytes quota. Requested 50G, quota is 100G and 80G has been consumed.',
        },
      },
    },
    kind: 'quota',
    message:
      'VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed gigabytes quota. Requested 50G, quota is 100G and 80G has been consumed.',
  },
  {
    name: 'Cinder badRequest',
    reply: {
      status: 400,
      body: {
        badRequest: { code: 400, message: 'Invalid volume: Volume status must be available or error.' },
      },
    },
    kind: 'bad-request',
    message: 'Invalid volume: Volume status must be available or error.',
  },
  {
    name: 'Glance HTML 404',
    reply: { status: 404, headers: { 'content-type': 'text/html; charset=UTF-8' }, text: glance404 },
    kind: 'not-found',
    message: 'No image found with ID 8a1b',
  },
  {
    name: 'Glance image quota (413 text)',
    reply: {
      status: 413,
      headers: { 'content-type': 'text/plain' },
      text: '413 Request Entity Too Large\n\nResource image_count_total is over limit of 5 due to current usage 5 and delta 1',
    },
    kind: 'quota',
    message:
      '413 Request Entity Too Large Resource image_count_total is over limit of 5 due to current usage 5 and delta 1',
  },
  {
    name: 'Swift container not found (HTML)',
    reply: {
      status: 404,
      headers: { 'content-type': 'text/html; charset=UTF-8' },
      text: '<html><h1>Not Found</h1><p>The resource could not be found.</p></html>',
    },
    kind: 'not-found',
    message: 'The resource could not be found.',
  },
  {
    name: 'Swift quota',
    reply: { status: 413, headers: { 'content-type': 'text/plain' }, text: 'Upload exceeds quota.' },
    kind: 'quota',
    message: 'Upload exceeds quota.',
  },
  {
    name: 'Swift container not empty',
    reply: {
      status: 409,
      headers: { 'content-type': 'text/html' },
      text: '<html><h1>Conflict</h1><p>There was a conflict when trying to complete your request.</p></html>',
    },
    kind: 'conflict',
    message: 'There was a conflict when trying to complete your request.',
  },
  {
    name: 'Keystone error object',
    reply: {
      status: 403,
      body: {
        error: {
          code: 403,
          title: 'Forbidden',
          message: 'You are not authorized to perform the requested action: identity:list_projects.',
        },
      },
    },
    kind: 'forbidden',
    message: 'You are not authorized to perform the requested action: identity:list_projects.',
    code: 'Forbidden',
  },
  {
    name: 'Magnum API-WG errors list',
    reply: {
      status: 400,
      body: {
        errors: [
          {
            request_id: '',
            code: 'client',
            status: 400,
            title: 'Bad Request',
            detail: 'Cluster template m1 not found.',
          },
        ],
      },
    },
    kind: 'bad-request',
    message: 'Cluster template m1 not found.',
  },
  {
    name: 'a proxy 502 page',
    reply: {
      status: 502,
      headers: { 'content-type': 'text/html' },
      text: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>',
    },
    kind: 'transient',
    message: '502 Bad Gateway',
  },
  {
    name: 'an empty 500',
    reply: { status: 500, text: '' },
    kind: 'transient',
    message: 'HTTP 500',
  },
];

void test('each service error body shape yields the right kind and the cloud message verbatim', async (t) => {
  const byPath = new Map(CASES.map((c, i) => [`/svc/${i}`, c.reply]));
  const server = await startFixture((req) => byPath.get(req.path));
  t.after(() => server.close());
  const session = new Session(
    { authType: 'admin_token', auth: { token: 'T' }, endpointOverride: `${server.url}/svc` },
    { maxRetries: 0 },
  );
  t.after(() => session.close());
  for (const [i, c] of CASES.entries()) {
    const err = await session.request('compute', 'GET', `/${i}`).catch((e: unknown) => e);
    assert.ok(err instanceof CloudError, c.name);
    assert.equal(err.kind, c.kind, c.name);
    assert.equal(err.cloudMessage, c.message, c.name);
    assert.equal(err.status, c.reply.status, c.name);
    if (c.code) assert.equal(err.cloudCode, c.code, c.name);
    assert.equal(err.transient, c.kind === 'transient', c.name);
  }
});

void test('deleteIgnoringNotFound treats a 404 as already deleted and rethrows anything else', async (t) => {
  const server = await startFixture((req) =>
    req.path === '/svc/servers/gone'
      ? { status: 404, body: { itemNotFound: { code: 404, message: 'Instance gone could not be found.' } } }
      : req.path === '/svc/servers/busy'
        ? { status: 409, body: { conflictingRequest: { code: 409, message: 'busy' } } }
        : { status: 204 },
  );
  t.after(() => server.close());
  const session = new Session({
    authType: 'admin_token',
    auth: { token: 'T' },
    endpointOverride: `${server.url}/svc`,
  });
  t.after(() => session.close());
  assert.equal(
    await deleteIgnoringNotFound(() => session.request('compute', 'DELETE', '/servers/here')),
    true,
  );
  assert.equal(
    await deleteIgnoringNotFound(() => session.request('compute', 'DELETE', '/servers/gone')),
    false,
  );
  await assert.rejects(
    deleteIgnoringNotFound(() => session.request('compute', 'DELETE', '/servers/busy')),
    (e: unknown) => e instanceof CloudError && e.kind === 'conflict',
  );
  const err = await session.request('compute', 'GET', '/servers/gone').catch((e: unknown) => e);
  assert.ok(isNotFound(err));
  assert.ok(!isQuotaExceeded(err));
});
