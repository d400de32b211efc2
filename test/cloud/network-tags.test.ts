import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCloudClients, Session } from '../../src/cloud/index.ts';
import { startFixture, type Handler, type SeenRequest } from './http-fixture.ts';

/**
 * How the network client tags what it creates: in the create request where Neutron offers the
 * `tag-creation` extension (2024.2 on; the embedded cloud does too), else with a tag
 * replacement right after the create (older Neutron, as the real-cloud suite runs it). The
 * fixture plays a Neutron of either kind.
 */

async function neutron(t: { after: (fn: () => unknown) => void }, extension: (req: SeenRequest) => number) {
  const handler: Handler = (req) => {
    if (req.path === '/network/v2.0/extensions/tag-creation') {
      const status = extension(req);
      return status === 200
        ? { status, body: { extension: { alias: 'tag-creation' } } }
        : { status, body: { NeutronError: { type: 'x', message: 'no', detail: '' } } };
    }
    if (req.method === 'POST' && req.path === '/network/v2.0/ports') {
      const port = (JSON.parse(req.body) as { port: Record<string, unknown> }).port;
      return {
        status: 201,
        body: { port: { id: 'port-1', name: port.name, network_id: 'n1', tags: port.tags ?? [] } },
      };
    }
    if (req.method === 'PUT' && req.path === '/network/v2.0/ports/port-1/tags') {
      return { status: 200, body: JSON.parse(req.body) as unknown };
    }
    return undefined;
  };
  const server = await startFixture(handler);
  t.after(() => server.close());
  const session = new Session({
    authType: 'admin_token',
    auth: { token: 'T', project_id: 'p1' },
    endpointOverrides: { network: `${server.url}/network` },
    endpointOverride: `${server.url}/unused`,
  });
  t.after(() => session.close());
  return { server, network: createCloudClients(session).network };
}

const calls = (reqs: SeenRequest[]) => reqs.map((r) => `${r.method} ${r.path}`);

void test('with tag-creation a port is created with its tags in one request, and the extension is asked once', async (t) => {
  const { server, network } = await neutron(t, () => 200);
  const a = await network.createPort({ networkId: 'n1', name: 'a', tags: ['k8s-cluster-x'] });
  const b = await network.createPort({ networkId: 'n1', name: 'b', tags: ['k8s-cluster-x'] });
  assert.deepEqual(a.tags, ['k8s-cluster-x']);
  assert.deepEqual(b.tags, ['k8s-cluster-x']);
  assert.deepEqual(calls(server.serviceRequests()), [
    'GET /network/v2.0/extensions/tag-creation',
    'POST /network/v2.0/ports',
    'POST /network/v2.0/ports',
  ]);
  const sent = JSON.parse(server.serviceRequests()[1]!.body) as { port: { tags: string[] } };
  assert.deepEqual(sent.port.tags, ['k8s-cluster-x']);
});

void test('without tag-creation (404) the port is created bare and tagged right after', async (t) => {
  const { server, network } = await neutron(t, () => 404);
  const a = await network.createPort({ networkId: 'n1', name: 'a', tags: ['k8s-cluster-x'] });
  await network.createPort({ networkId: 'n1', name: 'b', tags: ['k8s-cluster-x'] });
  assert.deepEqual(a.tags, ['k8s-cluster-x']);
  assert.deepEqual(calls(server.serviceRequests()), [
    'GET /network/v2.0/extensions/tag-creation',
    'POST /network/v2.0/ports',
    'PUT /network/v2.0/ports/port-1/tags',
    'POST /network/v2.0/ports',
    'PUT /network/v2.0/ports/port-1/tags',
  ]);
  const sent = JSON.parse(server.serviceRequests()[1]!.body) as { port: Record<string, unknown> };
  assert.equal('tags' in sent.port, false, 'an older Neutron refuses an attribute it does not know');
});

void test('an untagged create never asks about the extension; an unclear answer is asked again later', async (t) => {
  let answer = 403; // say, a policy that hides the extension list
  const { server, network } = await neutron(t, () => answer);
  await network.createPort({ networkId: 'n1', name: 'plain' });
  assert.deepEqual(calls(server.serviceRequests()), ['POST /network/v2.0/ports']);
  const a = await network.createPort({ networkId: 'n1', name: 'a', tags: ['t'] });
  assert.deepEqual(a.tags, ['t'], 'tagged after the create while the answer is unclear');
  answer = 200;
  await network.createPort({ networkId: 'n1', name: 'b', tags: ['t'] });
  assert.deepEqual(calls(server.serviceRequests()).slice(1), [
    'GET /network/v2.0/extensions/tag-creation',
    'POST /network/v2.0/ports',
    'PUT /network/v2.0/ports/port-1/tags',
    'GET /network/v2.0/extensions/tag-creation',
    'POST /network/v2.0/ports',
  ]);
});
