import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  call,
  isKeystoneError,
  login,
  projectScope,
  startIdentityServer,
  type IdentityServer,
  type KAssignment,
  type KProject,
  type KRef,
  type KUser,
} from './helpers.ts';

let s: IdentityServer;
let admin: string;
let member: string;

before(async () => {
  s = await startIdentityServer();
});
beforeEach(async () => {
  admin = (await login(s, s.creds.admin, projectScope('admin'))).token;
  member = (await login(s, s.creds.demo)).token;
});
after(() => s.close());

async function roleId(name: string): Promise<string> {
  return (await call<{ roles: KRef[] }>(`${s.v3}/roles?name=${name}`, 'GET', { token: admin })).body.roles[0]!
    .id;
}

async function projectId(name: string): Promise<string> {
  return (await call<{ projects: KProject[] }>(`${s.v3}/projects?name=${name}`, 'GET', { token: admin })).body
    .projects[0]!.id;
}

void test('a member gets 403 in Keystone shape for every write and for listing users and projects', async () => {
  const demoProject = await projectId('demo');
  const users = (await call<{ users: KUser[] }>(`${s.v3}/users`, 'GET', { token: admin })).body.users;
  const sa = users.find((u) => u.name === 'demo-sa')!;
  const writes: [string, string, unknown?][] = [
    ['POST', '/projects', { project: { name: 'nope' } }],
    ['PATCH', `/projects/${demoProject}`, { project: { description: 'x' } }],
    ['DELETE', `/projects/${demoProject}`],
    ['POST', '/users', { user: { name: 'nope', password: 'x' } }],
    ['PATCH', `/users/${sa.id}`, { user: { enabled: false } }],
    ['DELETE', `/users/${sa.id}`],
    ['PUT', `/projects/${demoProject}/users/${sa.id}/roles/${await roleId('admin')}`],
    ['DELETE', `/projects/${demoProject}/users/${sa.id}/roles/${await roleId('member')}`],
    ['GET', '/users'],
    ['GET', '/projects'],
    ['GET', '/role_assignments'],
  ];
  for (const [method, path, body] of writes) {
    const r = await call(`${s.v3}${path}`, method, { token: member, ...(body ? { body } : {}) });
    assert.ok(isKeystoneError(r, 403), `${method} ${path} → ${r.status} ${r.text}`);
    assert.match((r.body as { error: { message: string } }).error.message, /not authorized/);
  }
  // Nothing changed.
  const again = await call<{ user: KUser }>(`${s.v3}/users/${sa.id}`, 'GET', { token: admin });
  assert.equal(again.body.user.enabled, true);
});

void test('a member may read their own user and project but not other users or projects', async () => {
  const me = await s.identity.validate(member);
  assert.equal((await call(`${s.v3}/users/${me.userId}`, 'GET', { token: member })).status, 200);
  assert.equal((await call(`${s.v3}/projects/${me.projectId}`, 'GET', { token: member })).status, 200);
  const adminUser = (await s.identity.validate(admin)).userId;
  assert.ok(isKeystoneError(await call(`${s.v3}/users/${adminUser}`, 'GET', { token: member }), 403));
  assert.ok(
    isKeystoneError(
      await call(`${s.v3}/projects/${await projectId('admin')}`, 'GET', { token: member }),
      403,
    ),
  );
  const mine = await call<{ role_assignments: KAssignment[] }>(
    `${s.v3}/role_assignments?user.id=${me.userId}`,
    'GET',
    { token: member },
  );
  assert.equal(mine.status, 200);
  assert.equal(mine.body.role_assignments.length, 1);
});

void test('projects: create, show, filter by name, rename, disable, delete; duplicate names are 409', async () => {
  const c = await call<{ project: KProject }>(`${s.v3}/projects`, 'POST', {
    token: admin,
    body: {
      project: {
        name: 'team-a',
        description: 'A team',
        tags: ['x'],
        domain_id: 'default',
        cost_center: 'cc-1',
      },
    },
  });
  assert.equal(c.status, 201, c.text);
  const p = c.body.project;
  assert.equal(p.domain_id, 'default');
  assert.deepEqual(p.tags, ['x']);
  assert.equal(p.cost_center, 'cc-1', 'extra attributes are echoed');
  const dup = await call(`${s.v3}/projects`, 'POST', { token: admin, body: { project: { name: 'team-a' } } });
  assert.ok(isKeystoneError(dup, 409), dup.text);
  const listed = await call<{ projects: KProject[] }>(`${s.v3}/projects?name=team-a`, 'GET', {
    token: admin,
  });
  assert.deepEqual(
    listed.body.projects.map((x) => x.id),
    [p.id],
  );
  const renamed = await call<{ project: KProject }>(`${s.v3}/projects/${p.id}`, 'PATCH', {
    token: admin,
    body: { project: { name: 'team-b', enabled: false } },
  });
  assert.equal(renamed.body.project.name, 'team-b');
  assert.equal(renamed.body.project.enabled, false);
  const old = await call<{ projects: KProject[] }>(`${s.v3}/projects?name=team-a`, 'GET', { token: admin });
  assert.deepEqual(old.body.projects, []);
  // The old name is free again.
  const reuse = await call(`${s.v3}/projects`, 'POST', {
    token: admin,
    body: { project: { name: 'team-a' } },
  });
  assert.equal(reuse.status, 201, reuse.text);
  const disabled = await call<{ projects: KProject[] }>(`${s.v3}/projects?enabled=false`, 'GET', {
    token: admin,
  });
  assert.deepEqual(
    disabled.body.projects.map((x) => x.name),
    ['team-b'],
  );
  assert.equal((await call(`${s.v3}/projects/${p.id}`, 'DELETE', { token: admin })).status, 204);
  assert.ok(isKeystoneError(await call(`${s.v3}/projects/${p.id}`, 'GET', { token: admin }), 404));
  assert.ok(isKeystoneError(await call(`${s.v3}/projects/${p.id}`, 'DELETE', { token: admin }), 404));
});

void test('users: create with password, project and extra attributes; service_account is stored and echoed; duplicates are 409', async () => {
  const demo = await projectId('demo');
  const c = await call<{ user: KUser }>(`${s.v3}/users`, 'POST', {
    token: admin,
    body: {
      user: {
        name: 'robot',
        password: 'robot-pw',
        default_project_id: demo,
        service_account: true,
        team: 'ops',
      },
    },
  });
  assert.equal(c.status, 201, c.text);
  const u = c.body.user;
  assert.equal(u.service_account, true);
  assert.equal(u.team, 'ops');
  assert.equal(u.default_project_id, demo);
  assert.equal(u.domain_id, 'default');
  assert.equal('password' in u, false, 'the password is never shown');
  const dup = await call(`${s.v3}/users`, 'POST', { token: admin, body: { user: { name: 'robot' } } });
  assert.ok(isKeystoneError(dup, 409), dup.text);
  const shown = await call<{ user: KUser }>(`${s.v3}/users/${u.id}`, 'GET', { token: admin });
  assert.equal(shown.body.user.service_account, true);
  assert.equal(shown.body.user.team, 'ops');
  const unflag = await call<{ user: KUser }>(`${s.v3}/users/${u.id}`, 'PATCH', {
    token: admin,
    body: { user: { service_account: false } },
  });
  assert.equal(unflag.body.user.service_account, false);
  assert.equal(unflag.body.user.team, 'ops', 'other extras are kept');
  const byName = await call<{ users: KUser[] }>(`${s.v3}/users?name=robot&domain_id=default`, 'GET', {
    token: admin,
  });
  assert.deepEqual(
    byName.body.users.map((x) => x.id),
    [u.id],
  );
  assert.equal((await call(`${s.v3}/users/${u.id}`, 'DELETE', { token: admin })).status, 204);
  const gone = await call<{ users: KUser[] }>(`${s.v3}/users?name=robot`, 'GET', { token: admin });
  assert.deepEqual(gone.body.users, []);
});

void test("Magnetar's own service user cannot be deleted or disabled, and the admin cannot delete themself", async () => {
  const users = (await call<{ users: KUser[] }>(`${s.v3}/users`, 'GET', { token: admin })).body.users;
  const svc = users.find((u) => u.name === 'magnetar')!;
  assert.ok(isKeystoneError(await call(`${s.v3}/users/${svc.id}`, 'DELETE', { token: admin }), 403));
  assert.ok(
    isKeystoneError(
      await call(`${s.v3}/users/${svc.id}`, 'PATCH', { token: admin, body: { user: { enabled: false } } }),
      403,
    ),
  );
  const me = users.find((u) => u.name === 'admin')!;
  assert.ok(isKeystoneError(await call(`${s.v3}/users/${me.id}`, 'DELETE', { token: admin }), 403));
});

void test('grants: PUT is idempotent, GET checks, DELETE removes; unknown users, roles and projects are 404', async () => {
  const demo = await projectId('demo');
  const u = (
    await call<{ user: KUser }>(`${s.v3}/users`, 'POST', {
      token: admin,
      body: { user: { name: 'granted' } },
    })
  ).body.user;
  const reader = await roleId('reader');
  const path = `${s.v3}/projects/${demo}/users/${u.id}/roles/${reader}`;
  assert.ok(isKeystoneError(await call(path, 'GET', { token: admin }), 404));
  assert.equal((await call(path, 'PUT', { token: admin })).status, 204);
  assert.equal((await call(path, 'PUT', { token: admin })).status, 204);
  assert.equal((await call(path, 'GET', { token: admin })).status, 204);
  assert.equal((await call(path, 'HEAD', { token: admin })).status, 204);
  const roles = await call<{ roles: KRef[] }>(`${s.v3}/projects/${demo}/users/${u.id}/roles`, 'GET', {
    token: admin,
  });
  assert.deepEqual(
    roles.body.roles.map((r) => r.name),
    ['reader'],
  );
  assert.equal((await call(path, 'DELETE', { token: admin })).status, 204);
  assert.ok(isKeystoneError(await call(path, 'DELETE', { token: admin }), 404));
  const bogus = '0123456789abcdef0123456789abcdef';
  for (const p of [
    `${s.v3}/projects/${bogus}/users/${u.id}/roles/${reader}`,
    `${s.v3}/projects/${demo}/users/${bogus}/roles/${reader}`,
    `${s.v3}/projects/${demo}/users/${u.id}/roles/${bogus}`,
  ]) {
    assert.ok(isKeystoneError(await call(p, 'PUT', { token: admin }), 404), p);
  }
});

void test('role assignments filter by user, project, role and system; effective expands implied roles; include_names adds names', async () => {
  const demo = await projectId('demo');
  const all = await call<{ role_assignments: KAssignment[] }>(`${s.v3}/role_assignments`, 'GET', {
    token: admin,
  });
  assert.ok(all.body.role_assignments.length >= 5);
  const inDemo = await call<{ role_assignments: KAssignment[] }>(
    `${s.v3}/role_assignments?scope.project.id=${demo}&include_names=True`,
    'GET',
    {
      token: admin,
    },
  );
  const names = inDemo.body.role_assignments
    .map((a) => `${a.user.name}:${a.role.name}@${a.scope.project?.name}/${a.scope.project?.domain?.name}`)
    .sort();
  assert.ok(names.includes('demo:member@demo/Default'), names.join());
  assert.ok(names.includes('demo-sa:member@demo/Default'), names.join());
  const adminUser = (await s.identity.validate(admin)).userId;
  const system = await call<{ role_assignments: KAssignment[] }>(
    `${s.v3}/role_assignments?scope.system=all&user.id=${adminUser}`,
    'GET',
    {
      token: admin,
    },
  );
  assert.equal(system.body.role_assignments.length, 1);
  assert.deepEqual(system.body.role_assignments[0]!.scope, { system: { all: true } });
  const direct = await call<{ role_assignments: KAssignment[] }>(
    `${s.v3}/role_assignments?user.id=${adminUser}&scope.project.id=${await projectId('admin')}`,
    'GET',
    {
      token: admin,
    },
  );
  assert.equal(direct.body.role_assignments.length, 1);
  const effective = await call<{ role_assignments: KAssignment[] }>(
    `${s.v3}/role_assignments?user.id=${adminUser}&scope.project.id=${await projectId('admin')}&effective&include_names`,
    'GET',
    { token: admin },
  );
  assert.deepEqual(effective.body.role_assignments.map((a) => a.role.name).sort(), [
    'admin',
    'member',
    'reader',
  ]);
  const onlyReader = await call<{ role_assignments: KAssignment[] }>(
    `${s.v3}/role_assignments?role.id=${await roleId('reader')}&effective`,
    'GET',
    {
      token: admin,
    },
  );
  assert.ok(onlyReader.body.role_assignments.length >= 5, 'every assignment implies reader');
  assert.match(onlyReader.body.role_assignments[0]!.links.assignment, /\/identity\/v3\//);
  const groups = await call<{ role_assignments: KAssignment[] }>(
    `${s.v3}/role_assignments?group.id=x`,
    'GET',
    { token: admin },
  );
  assert.deepEqual(groups.body.role_assignments, []);
});

void test('roles and implied roles are listed for any authenticated user', async () => {
  const roles = await call<{ roles: KRef[] }>(`${s.v3}/roles`, 'GET', { token: member });
  assert.deepEqual(roles.body.roles.map((r) => r.name).sort(), ['admin', 'member', 'reader']);
  const inferences = await call<{ role_inferences: { prior_role: KRef; implies: KRef[] }[] }>(
    `${s.v3}/role_inferences`,
    'GET',
    {
      token: member,
    },
  );
  const pairs = inferences.body.role_inferences
    .map((i) => `${i.prior_role.name}>${i.implies.map((r) => r.name).join(',')}`)
    .sort();
  assert.deepEqual(pairs, ['admin>member', 'member>reader']);
  const alias = await call(`${s.v3}/implied_roles`, 'GET', { token: member });
  assert.deepEqual(alias.body, {
    ...(inferences.body as object),
    links: (alias.body as { links: unknown }).links,
  });
});

void test('bad input answers 400, unknown references 404, in Keystone shape and never 500', async () => {
  const cases: [string, string, { raw?: string; body?: unknown }, number][] = [
    ['POST', '/users', { raw: '{"user": {' }, 400],
    ['POST', '/users', { body: { user: {} } }, 400],
    ['POST', '/users', { body: { nope: {} } }, 400],
    ['POST', '/users', { body: { user: { name: 'x', enabled: 'yes' } } }, 400],
    ['POST', '/users', { body: { user: { name: 'x', service_account: 'yes' } } }, 400],
    ['POST', '/users', { body: { user: { name: 'x', domain_id: 'no-such-domain' } } }, 404],
    ['POST', '/users', { body: { user: { name: 'x', default_project_id: 'no-such-project' } } }, 404],
    ['POST', '/projects', { body: { project: { name: '' } } }, 400],
    ['POST', '/projects', { body: { project: { name: 'x', domain_id: 'no-such-domain' } } }, 404],
    ['POST', '/projects', { body: { project: { name: 'x', is_domain: true } } }, 400],
    ['POST', '/projects', { body: 'just a string' }, 400],
    ['PATCH', `/projects/${await projectId('demo')}`, { body: { project: { domain_id: 'elsewhere' } } }, 400],
    ['GET', '/users/does-not-exist', {}, 404],
    ['GET', '/domains/does-not-exist', {}, 404],
    ['GET', '/roles/does-not-exist', {}, 404],
    ['GET', '/role_assignments?scope.project.id=a&scope.domain.id=b', {}, 400],
  ];
  for (const [method, path, b, status] of cases) {
    const r = await call(`${s.v3}${path}`, method, {
      token: admin,
      ...(b.raw !== undefined ? { rawBody: b.raw } : { body: b.body }),
    });
    assert.ok(isKeystoneError(r, status), `${method} ${path} ${JSON.stringify(b)} → ${r.status} ${r.text}`);
  }
});

void test('domains are listed and shown with Keystone fields', async () => {
  const list = await call<{ domains: (KRef & { enabled: boolean })[] }>(`${s.v3}/domains`, 'GET', {
    token: member,
  });
  assert.deepEqual(
    list.body.domains.map((d) => [d.id, d.name, d.enabled]),
    [['default', 'Default', true]],
  );
  const byName = await call<{ domains: KRef[] }>(`${s.v3}/domains?name=Default`, 'GET', { token: admin });
  assert.equal(byName.body.domains.length, 1);
  const show = await call<{ domain: KRef }>(`${s.v3}/domains/default`, 'GET', { token: admin });
  assert.equal(show.body.domain.name, 'Default');
});
