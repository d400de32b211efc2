// Magnetar dashboard: a single page over the public APIs (identity v3, Magnum v1, compute).
// The token lives in sessionStorage only and travels in the X-Auth-Token header, never in a URL
// or a cookie; a cross-site page cannot make the browser attach it, so no request can be forged
// (CSRF-safe by construction).
const POLICY = JSON.parse(document.getElementById('policy').textContent);
const main = document.getElementById('main');
const live = document.getElementById('live');
const KEY = 'magnetar.session';
let session = load();
let timer = null;
const seen = new Map(); // cluster uuid -> timeline entries observed while the page is open

function load() {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    return s && Date.parse(s.expires) > Date.now() ? s : null;
  } catch {
    return null;
  }
}
function save(s) {
  session = s;
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
}

// ---------- HTML helpers ----------
const esc = (v) =>
  String(v ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
function html(strings, ...vals) {
  return strings.reduce(
    (a, s, i) =>
      a + s + (i < vals.length ? (vals[i] && vals[i].raw !== undefined ? vals[i].raw : esc(vals[i])) : ''),
    '',
  );
}
const raw = (s) => ({ raw: s });
function statusClass(s) {
  s = String(s || '');
  return s.endsWith('COMPLETE') ? 'ok' : s.endsWith('FAILED') ? 'fail' : 'busy';
}
function announce(text) {
  live.textContent = text;
}

// ---------- API ----------
class ApiError extends Error {
  constructor(msg, status) {
    super(msg);
    this.status = status;
  }
}
function messageOf(body, status) {
  if (body && typeof body === 'object') {
    if (Array.isArray(body.errors) && body.errors[0]) return body.errors[0].detail || body.errors[0].title;
    if (body.error && body.error.message) return body.error.message;
    if (typeof body.message === 'string') return body.message;
    for (const v of Object.values(body))
      if (v && typeof v === 'object' && typeof v.message === 'string') return v.message;
  }
  const words = {
    400: 'The request was not valid.',
    401: 'Your session has ended; please log in again.',
    403: 'You are not allowed to do that.',
    404: 'It does not exist (any more).',
    409: 'It is in a state that does not allow that now.',
    413: 'The request is too large.',
    503: 'The service is unavailable; try again shortly.',
  };
  return words[status] || 'The server could not complete the request.';
}
function endpoint(type) {
  const e = (session.catalog || []).find((c) => c.type === type);
  const ep = e && (e.endpoints.find((x) => x.interface === 'public') || e.endpoints[0]);
  return ep ? new URL(ep.url).pathname.replace(/\/$/, '') : null;
}
async function api(method, path, body, extra = {}) {
  const headers = { accept: 'application/json', 'openstack-api-version': 'container-infra latest', ...extra };
  if (session && session.token) headers['x-auth-token'] = session.token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (res.status === 401 && session && !path.includes('/auth/tokens')) {
    save(null);
    route();
  }
  if (!res.ok) throw new ApiError(messageOf(data, res.status), res.status);
  return { data, res };
}

// ---------- login ----------
async function issue(identity, scope) {
  const { data, res } = await api('POST', '/identity/v3/auth/tokens', {
    auth: { identity, ...(scope ? { scope } : {}) },
  });
  return { token: res.headers.get('x-subject-token'), t: data.token };
}
function sessionFrom({ token, t }) {
  const roles = (t.roles || []).map((r) => r.name);
  return {
    token,
    expires: t.expires_at,
    user: t.user,
    project: t.project || null,
    catalog: t.catalog || [],
    roles,
    isAdmin: roles.includes('admin'),
  };
}
function loginView(msg) {
  document.getElementById('nav').hidden = true;
  main.innerHTML = html`<h1>Log in</h1>
    ${raw(msg ? html`<p class="alert" role="alert">${msg}</p>` : '')}
    <form id="login" novalidate>
      <div class="field">
        <label for="method">Method</label
        ><select id="method" name="method">
          <option value="password">Password</option>
          <option value="appcred">Application credential</option>
        </select>
      </div>
      <div data-for="password">
        <div class="field">
          <label for="username">User name</label
          ><input id="username" name="username" autocomplete="username" required /><span
            class="error"
            id="username-error"
          ></span>
        </div>
        <div class="field">
          <label for="password">Password</label
          ><input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
          /><span class="error" id="password-error"></span>
        </div>
        <div class="field">
          <label for="domain">Domain</label><input id="domain" name="domain" value="Default" />
        </div>
        <div class="field">
          <label for="project">Project (optional)</label><input id="project" name="project" />
        </div>
      </div>
      <div data-for="appcred" hidden>
        <div class="field">
          <label for="acid">Application credential ID</label><input id="acid" name="acid" /><span
            class="error"
            id="acid-error"
          ></span>
        </div>
        <div class="field">
          <label for="acsecret">Secret</label><input id="acsecret" name="acsecret" type="password" /><span
            class="error"
            id="acsecret-error"
          ></span>
        </div>
      </div>
      <p class="error" id="login-error" role="alert"></p>
      <button type="submit">Log in</button>
    </form>`;
  const f = document.getElementById('login');
  f.method.addEventListener('change', () => {
    for (const d of f.querySelectorAll('[data-for]')) d.hidden = d.dataset.for !== f.method.value;
  });
  submitting(f, async () => {
    const errs = {};
    let identity;
    if (f.method.value === 'password') {
      if (!f.username.value.trim()) errs.username = 'Enter your user name.';
      if (!f.password.value) errs.password = 'Enter your password.';
      identity = {
        methods: ['password'],
        password: {
          user: {
            name: f.username.value.trim(),
            domain: { name: f.domain.value || 'Default' },
            password: f.password.value,
          },
        },
      };
    } else {
      if (!f.acid.value.trim()) errs.acid = 'Enter the application credential ID.';
      if (!f.acsecret.value) errs.acsecret = 'Enter the secret.';
      identity = {
        methods: ['application_credential'],
        application_credential: { id: f.acid.value.trim(), secret: f.acsecret.value },
      };
    }
    if (showErrors(f, errs)) return;
    try {
      let s;
      if (f.method.value === 'appcred') s = await issue(identity);
      else if (f.project.value.trim())
        s = await issue(identity, {
          project: { name: f.project.value.trim(), domain: { name: f.domain.value || 'Default' } },
        });
      else {
        const un = await issue(identity);
        save(sessionFrom(un));
        const { data } = await api('GET', '/identity/v3/auth/projects');
        const p = data.projects[0];
        s = p ? await issue({ methods: ['token'], token: { id: un.token } }, { project: { id: p.id } }) : un;
      }
      save(sessionFrom(s));
      location.hash = '#/clusters';
      projectsMenu();
      route();
    } catch (e) {
      document.getElementById('login-error').textContent =
        e.message === 'The request was not valid.' ? e.message : e.message;
    }
  });
}
async function logout() {
  try {
    await api('DELETE', '/identity/v3/auth/tokens', undefined, { 'x-subject-token': session.token });
  } catch {
    /* the token may already be gone */
  }
  save(null);
  location.hash = '#/login';
  loginView('You have logged out.');
}

// ---------- forms ----------
function showErrors(form, errs) {
  for (const el of form.querySelectorAll('.error[id$="-error"]')) el.textContent = '';
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  let first = null;
  for (const [k, v] of Object.entries(errs)) {
    const e = form.querySelector(`#${k}-error`) || form.querySelector('.error[role=alert]');
    if (e) e.textContent = v;
    const input = form.querySelector(`[name="${k}"]`);
    if (input) {
      input.setAttribute('aria-invalid', 'true');
      input.setAttribute('aria-describedby', `${k}-error`);
      first = first || input;
    }
  }
  if (first) first.focus();
  return Object.keys(errs).length > 0;
}
// One request at a time per form: the submit button is disabled while it is in flight.
function submitting(form, fn) {
  let busy = false;
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (busy) return;
    busy = true;
    const btns = form.querySelectorAll('button[type=submit]');
    btns.forEach((b) => (b.disabled = true));
    try {
      await fn();
    } finally {
      busy = false;
      btns.forEach((b) => (b.disabled = false));
    }
  });
}
const formAlert = (form, msg) => {
  const e = form.querySelector('.error[role=alert]');
  if (e) e.textContent = msg;
};

// ---------- clusters ----------
async function clustersView() {
  const { data } = await api('GET', '/v1/clusters');
  const list = data.clusters || [];
  main.innerHTML = html`<h1>Clusters</h1>
    <p><a href="#/create">Create a cluster</a></p>
    ${raw(
      list.length === 0
        ? '<p>No clusters yet.</p>'
        : html`<table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Status</th>
                <th>Health</th>
                <th>Masters</th>
                <th>Nodes</th>
                <th>Kubernetes</th>
              </tr>
            </thead>
            <tbody>
              ${raw(
                list
                  .map(
                    (c) =>
                      html`<tr>
                        <td><a href="#/cluster/${c.uuid}">${c.name}</a></td>
                        <td class="status ${statusClass(c.status)}">${c.status}</td>
                        <td>${c.health_status || ''}</td>
                        <td>${c.master_count}</td>
                        <td>${c.node_count}</td>
                        <td>${c.coe_version || ''}</td>
                      </tr>`,
                  )
                  .join(''),
              )}
            </tbody>
          </table>`,
    )}`;
  poll(list.some((c) => statusClass(c.status) === 'busy') ? 2000 : 10000, clustersView);
}

function timeline(c) {
  const t = seen.get(c.uuid) || [];
  const last = t[t.length - 1];
  if (
    !last ||
    last.status !== c.status ||
    last.reason !== (c.status_reason || '') ||
    last.health !== (c.health_status || '')
  ) {
    t.push({
      at: new Date().toLocaleTimeString(),
      status: c.status,
      reason: c.status_reason || '',
      health: c.health_status || '',
    });
    if (last) announce(`Cluster ${c.name}: ${c.status}`);
  }
  seen.set(c.uuid, t);
  return t;
}

async function machinesOf(c) {
  const compute = endpoint('compute');
  if (!compute) return [];
  try {
    const { data } = await api('GET', `${compute}/servers/detail`);
    return (data.servers || []).filter(
      (s) => s.name.startsWith(`${c.name}-`) || (s.metadata && Object.values(s.metadata).includes(c.uuid)),
    );
  } catch {
    return [];
  }
}

async function clusterView(id) {
  let c;
  try {
    c = (await api('GET', `/v1/clusters/${id}`)).data;
  } catch (e) {
    if (e.status === 404) {
      main.innerHTML = html`<h1>Cluster deleted</h1>
        <p role="status">The cluster is gone.</p>
        <p><a href="#/clusters">Back to clusters</a></p>`;
      return;
    }
    throw e;
  }
  const [ngs, machines, templates] = await Promise.all([
    api('GET', `/v1/clusters/${id}/nodegroups`)
      .then((r) => r.data.nodegroups || [])
      .catch(() => []),
    machinesOf(c),
    api('GET', '/v1/clustertemplates')
      .then((r) => r.data.clustertemplates || [])
      .catch(() => []),
  ]);
  const t = timeline(c);
  const current = templates.find((x) => x.uuid === c.cluster_template_id);
  const upgrades = templates.filter((x) => x.uuid !== c.cluster_template_id && upgradeAllowed(current, x));
  const focusId = document.activeElement && document.activeElement.id;
  const keep = {};
  for (const el of main.querySelectorAll('input')) keep[el.id] = el.value;
  main.innerHTML = html`<h1>Cluster ${c.name}</h1>
    <dl aria-live="polite">
      <dt>Status</dt>
      <dd class="status ${statusClass(c.status)}" id="cluster-status">${c.status}</dd>
      <dt>Reason</dt>
      <dd>${c.status_reason || '—'}</dd>
      <dt>Health</dt>
      <dd>
        ${c.health_status || '—'}
        ${c.health_status_reason && Object.keys(c.health_status_reason).length ? JSON.stringify(c.health_status_reason) : ''}
      </dd>
      <dt>Template</dt>
      <dd>${current ? current.name : c.cluster_template_id}</dd>
      <dt>Kubernetes API</dt>
      <dd>${c.api_address || '—'}</dd>
      <dt>Master addresses</dt>
      <dd>${(c.master_addresses || []).join(', ') || '—'}</dd>
      <dt>Node addresses</dt>
      <dd>${(c.node_addresses || []).join(', ') || '—'}</dd>
      <dt>Key pair</dt>
      <dd>${c.keypair || '—'}</dd>
    </dl>
    <h2>Node groups</h2>
    <table>
      <thead>
        <tr>
          <th>Name</th>
          <th>Role</th>
          <th>Nodes</th>
          <th>Flavor</th>
          <th>Status</th>
          <th>Actions</th>
        </tr>
      </thead>
      <tbody>
        ${raw(
          ngs
            .map(
              (n) =>
                html`<tr>
                  <td>${n.name}</td>
                  <td>${n.role}</td>
                  <td>${n.node_count}</td>
                  <td>${n.flavor_id}</td>
                  <td class="status ${statusClass(n.status)}">${n.status || ''}</td>
                  <td>
                    ${raw(
                      n.role === 'master'
                        ? ''
                        : html`<form class="inline ng-resize" data-ng="${n.name}" novalidate>
                              <label for="resize-${n.name}">Nodes</label>
                              <input
                                id="resize-${n.name}"
                                name="count"
                                type="number"
                                min="0"
                                value="${n.node_count}"
                                size="3"
                              />
                              <button type="submit" class="secondary">Resize ${n.name}</button
                              ><span class="error" role="alert"></span>
                            </form>
                            ${raw(n.is_default ? '' : html`<button type="button" class="danger ng-delete" data-ng="${n.name}">Delete ${n.name}</button>`)}`,
                    )}
                  </td>
                </tr>`,
            )
            .join(''),
        )}
      </tbody>
    </table>
    <h2>Machines</h2>
    ${raw(
      machines.length === 0
        ? '<p>No machines yet.</p>'
        : html`<table>
            <thead>
              <tr>
                <th>Name</th>
                <th>State</th>
                <th>Availability zone</th>
                <th>Addresses</th>
              </tr>
            </thead>
            <tbody>
              ${raw(
                machines
                  .map(
                    (s) =>
                      html`<tr>
                        <td>${s.name}</td>
                        <td>${s.status}</td>
                        <td>${s['OS-EXT-AZ:availability_zone'] || '—'}</td>
                        <td>
                          ${Object.values(s.addresses || {})
                            .flat()
                            .map((a) => a.addr)
                            .join(', ')}
                        </td>
                      </tr>`,
                  )
                  .join(''),
              )}
            </tbody>
          </table>`,
    )}
    <h2>Timeline</h2>
    <ol class="timeline">
      ${raw(t.map((e) => html`<li>${e.at}: <strong>${e.status}</strong>${e.health ? ` (health ${e.health})` : ''}${e.reason ? ` — ${e.reason}` : ''}</li>`).join(''))}
    </ol>
    <h2>Actions</h2>
    <form id="ng-add" novalidate>
      <h3>Add a node group</h3>
      <div class="field">
        <label for="ng-name">Node group name</label><input id="ng-name" name="ng-name" required /><span
          class="error"
          id="ng-name-error"
        ></span>
      </div>
      <div class="field">
        <label for="ng-count">Node group size</label
        ><input id="ng-count" name="ng-count" type="number" min="1" value="1" /><span
          class="error"
          id="ng-count-error"
        ></span>
      </div>
      <div class="field">
        <label for="ng-flavor">Flavor</label
        ><input id="ng-flavor" name="ng-flavor" value="${c.flavor_id || ''}" />
      </div>
      <div class="field">
        <label for="ng-az">Availability zone (optional)</label><input id="ng-az" name="ng-az" />
      </div>
      <p class="error" role="alert"></p>
      <button type="submit">Add node group</button>
    </form>
    <form id="upgrade" novalidate>
      <h3>Upgrade</h3>
      ${raw(
        upgrades.length === 0
          ? '<p>No valid upgrade target (same or next minor Kubernetes version).</p>'
          : html`<div class="field">
                <label for="upgrade-template">Target template</label
                ><select id="upgrade-template" name="upgrade-template">
                  ${raw(upgrades.map((x) => html`<option value="${x.uuid}">${x.name} (${kubeTag(x)})</option>`).join(''))}
                </select>
              </div>
              <p class="error" role="alert"></p>
              <button type="submit">Upgrade</button>`,
      )}
    </form>
    <form id="kubeconfig" novalidate>
      <h3>Kubeconfig</h3>
      <p>Creates a new key in this browser and has the cluster CA sign it.</p>
      <p class="error" role="alert"></p>
      <button type="submit">Download kubeconfig</button>
    </form>
    <form id="delete" novalidate>
      <h3>Delete the cluster</h3>
      <div class="field">
        <label for="confirm-name">Type the cluster name (${c.name}) to confirm</label
        ><input id="confirm-name" name="confirm-name" autocomplete="off" /><span
          class="error"
          id="confirm-name-error"
        ></span>
      </div>
      <button type="submit" class="danger">Delete cluster</button>
    </form>`;
  for (const [k, v] of Object.entries(keep)) {
    const el = document.getElementById(k);
    if (el && v !== undefined && el.type !== 'number') el.value = v;
  }
  if (focusId && document.getElementById(focusId)) document.getElementById(focusId).focus();

  for (const f of main.querySelectorAll('form.ng-resize'))
    submitting(f, async () => {
      const n = Number(f.count.value);
      const max = POLICY.maxNodesPerNodeGroup;
      if (!Number.isInteger(n) || n < 0) return formAlert(f, 'Enter a whole number of nodes.');
      if (max !== null && n > max)
        return formAlert(f, `A node group holds at most ${max} nodes; add another node group instead.`);
      try {
        await api('POST', `/v1/clusters/${id}/actions/resize`, { node_count: n, nodegroup: f.dataset.ng });
        refresh();
      } catch (e) {
        formAlert(f, e.message);
      }
    });
  for (const b of main.querySelectorAll('button.ng-delete'))
    b.addEventListener('click', async () => {
      if (!confirm(`Delete node group ${b.dataset.ng}?`)) return;
      b.disabled = true;
      try {
        await api('DELETE', `/v1/clusters/${id}/nodegroups/${b.dataset.ng}`);
        refresh();
      } catch (e) {
        announce(e.message);
        alert(e.message);
        b.disabled = false;
      }
    });
  const add = document.getElementById('ng-add');
  submitting(add, async () => {
    const errs = {};
    const count = Number(add['ng-count'].value);
    if (!/^[A-Za-z][A-Za-z0-9_.-]*$/.test(add['ng-name'].value))
      errs['ng-name'] = 'Start with a letter; use letters, digits, dot, dash or underscore.';
    if (!Number.isInteger(count) || count < 1) errs['ng-count'] = 'Enter at least 1 node.';
    else if (POLICY.maxNodesPerNodeGroup !== null && count > POLICY.maxNodesPerNodeGroup)
      errs['ng-count'] = `A node group holds at most ${POLICY.maxNodesPerNodeGroup} nodes.`;
    if (showErrors(add, errs)) return;
    const body = { name: add['ng-name'].value, node_count: count, role: 'worker' };
    if (add['ng-flavor'].value) body.flavor_id = add['ng-flavor'].value;
    if (add['ng-az'].value) body.labels = { availability_zone: add['ng-az'].value };
    try {
      await api('POST', `/v1/clusters/${id}/nodegroups`, body);
      add.reset();
      refresh();
    } catch (e) {
      formAlert(add, e.message);
    }
  });
  const up = document.getElementById('upgrade');
  submitting(up, async () => {
    if (!up['upgrade-template']) return;
    try {
      await api('POST', `/v1/clusters/${id}/actions/upgrade`, {
        cluster_template: up['upgrade-template'].value,
      });
      refresh();
    } catch (e) {
      formAlert(up, e.message);
    }
  });
  const kc = document.getElementById('kubeconfig');
  submitting(kc, async () => {
    try {
      await downloadKubeconfig(c);
    } catch (e) {
      formAlert(kc, e.message);
    }
  });
  const del = document.getElementById('delete');
  submitting(del, async () => {
    if (del['confirm-name'].value !== c.name)
      return void showErrors(del, { 'confirm-name': `Type ${c.name} exactly to delete it.` });
    try {
      await api('DELETE', `/v1/clusters/${id}`);
      announce(`Deleting ${c.name}`);
      refresh();
    } catch (e) {
      showErrors(del, { 'confirm-name': e.message });
    }
  });
  const busy = statusClass(c.status) === 'busy' || ngs.some((n) => statusClass(n.status) === 'busy');
  poll(busy ? 2000 : 10000, () => clusterView(id));
}

function kubeTag(t) {
  return (t && ((t.labels && t.labels.kube_tag) || t.coe_version)) || '';
}
function minorOf(tag) {
  const m = /v?(\d+)\.(\d+)/.exec(tag || '');
  return m ? [Number(m[1]), Number(m[2])] : null;
}
function upgradeAllowed(from, to) {
  const a = minorOf(kubeTag(from)),
    b = minorOf(kubeTag(to));
  return !!a && !!b && a[0] === b[0] && (b[1] === a[1] || b[1] === a[1] + 1) && kubeTag(to) >= kubeTag(from);
}

// ---------- kubeconfig: key + CSR in the browser, signed through POST /v1/certificates ----------
function der(tag, ...parts) {
  const body = parts.flatMap((p) => Array.from(p));
  const n = body.length;
  const len =
    n < 128
      ? [n]
      : n < 256
        ? [0x81, n]
        : n < 65536
          ? [0x82, n >> 8, n & 255]
          : [0x83, n >> 16, (n >> 8) & 255, n & 255];
  return Uint8Array.from([tag, ...len, ...body]);
}
const SEQ = 0x30,
  SET = 0x31;
const oid = (bytes) => der(0x06, Uint8Array.from(bytes));
const utf8 = (s) => der(0x0c, new TextEncoder().encode(s));
const rdn = (o, v) => der(SET, der(SEQ, oid(o), utf8(v)));
const b64 = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)));
const pem = (label, bytes) =>
  `-----BEGIN ${label}-----\n${b64(bytes)
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END ${label}-----\n`;
async function makeCsr(cn, org) {
  const alg = {
    name: 'RSASSA-PKCS1-v1_5',
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: 'SHA-256',
  };
  const keys = await crypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const spki = new Uint8Array(await crypto.subtle.exportKey('spki', keys.publicKey));
  const subject = der(SEQ, rdn([0x55, 0x04, 0x0a], org), rdn([0x55, 0x04, 0x03], cn));
  const info = der(SEQ, der(0x02, [0]), subject, spki, Uint8Array.from([0xa0, 0x00]));
  const sig = new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', keys.privateKey, info));
  const sigAlg = der(
    SEQ,
    oid([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b]),
    Uint8Array.from([0x05, 0x00]),
  );
  const csr = der(SEQ, info, sigAlg, der(0x03, Uint8Array.from([0, ...sig])));
  const pkcs8 = await crypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { csr: pem('CERTIFICATE REQUEST', csr), key: pem('PRIVATE KEY', pkcs8) };
}
const b64text = (s) => btoa(unescape(encodeURIComponent(s)));
async function downloadKubeconfig(c) {
  if (!c.api_address)
    throw new Error('The cluster has no Kubernetes API address yet; wait until it is created.');
  const { csr, key } = await makeCsr('admin', 'system:masters');
  const ca = (await api('GET', `/v1/certificates/${c.uuid}`)).data.pem;
  const cert = (await api('POST', '/v1/certificates', { cluster_uuid: c.uuid, csr })).data.pem;
  const yaml = `apiVersion: v1
kind: Config
clusters:
- name: ${c.name}
  cluster:
    server: ${c.api_address}
    certificate-authority-data: ${b64text(ca)}
users:
- name: admin
  user:
    client-certificate-data: ${b64text(cert)}
    client-key-data: ${b64text(key)}
contexts:
- name: default
  context:
    cluster: ${c.name}
    user: admin
current-context: default
`;
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([yaml], { type: 'application/yaml' }));
  a.download = `${c.name}.kubeconfig`;
  document.body.append(a);
  a.click();
  a.remove();
  announce('Kubeconfig downloaded.');
}

// ---------- create ----------
function validateCreate(v) {
  const errs = {};
  const required = new Set(POLICY.requiredCreateFields);
  if (!/^[A-Za-z][A-Za-z0-9_.-]*$/.test(v.name))
    errs.name = 'Start with a letter; use letters, digits, dot, dash or underscore.';
  if (required.has('cluster_template_id') && !v.cluster_template_id)
    errs.cluster_template_id = 'Choose a cluster template.';
  const mc = Number(v.master_count);
  if (v.master_count === '' ? required.has('master_count') : !Number.isInteger(mc) || mc < 1)
    errs.master_count = 'Enter a number of masters (at least 1).';
  else if (POLICY.oddMasterCountOnly && mc % 2 === 0)
    errs.master_count = 'The master count must be odd (1, 3, 5…) so the control plane keeps a quorum.';
  const nc = Number(v.node_count);
  if (v.node_count === '' ? required.has('node_count') : !Number.isInteger(nc) || nc < 0)
    errs.node_count = 'Enter a number of worker nodes.';
  else if (POLICY.maxNodesPerNodeGroup !== null && nc > POLICY.maxNodesPerNodeGroup)
    errs.node_count = `At most ${POLICY.maxNodesPerNodeGroup} nodes per node group; add another node group for more.`;
  for (const [k, msg] of [
    ['master_flavor_id', 'Choose a master flavor.'],
    ['flavor_id', 'Choose a node flavor.'],
    ['keypair', 'Choose a key pair.'],
  ])
    if (required.has(k) && !v[k]) errs[k] = msg;
  return errs;
}
async function createView() {
  const compute = endpoint('compute');
  const [templates, flavors, keypairs, me] = await Promise.all([
    api('GET', '/v1/clustertemplates').then((r) => r.data.clustertemplates || []),
    compute
      ? api('GET', `${compute}/flavors`)
          .then((r) => r.data.flavors || [])
          .catch(() => [])
      : [],
    compute
      ? api('GET', `${compute}/os-keypairs`)
          .then((r) => r.data.keypairs.map((k) => k.keypair.name))
          .catch(() => [])
      : [],
    api('GET', `/identity/v3/users/${session.user.id}`)
      .then((r) => r.data.user)
      .catch(() => null),
  ]);
  const opts = (list, sel) =>
    list.map((x) => html`<option value="${x}" ${raw(x === sel ? 'selected' : '')}>${x}</option>`).join('');
  const fl = flavors.map((f) => f.name);
  const notice =
    POLICY.serviceAccountRequired && me && me.service_account !== true
      ? html`<p class="notice" role="note" id="sa-notice">
          You are logged in as a personal account. Only service accounts may create clusters, so the cluster
          does not depend on a person; log in with a service account (for example the project's
          <code>-sa</code> user or an application credential of one).
        </p>`
      : '';
  main.innerHTML = html`<h1>Create a cluster</h1>
    ${raw(notice)}
    <form id="create" novalidate>
      <div class="field">
        <label for="name">Cluster name</label><input id="name" name="name" required /><span
          class="error"
          id="name-error"
        ></span>
      </div>
      <div class="field">
        <label for="cluster_template_id">Cluster template</label
        ><select id="cluster_template_id" name="cluster_template_id">
          <option value="">Choose…</option>
          ${raw(templates.map((t) => html`<option value="${t.uuid}">${t.name} (${kubeTag(t)})</option>`).join(''))}</select
        ><span class="error" id="cluster_template_id-error"></span>
      </div>
      <div class="field">
        <label for="master_count">Masters (odd)</label
        ><input id="master_count" name="master_count" type="number" min="1" step="2" value="1" /><span
          class="error"
          id="master_count-error"
        ></span>
      </div>
      <div class="field">
        <label for="master_flavor_id">Master flavor</label
        ><select id="master_flavor_id" name="master_flavor_id">
          <option value="">Choose…</option>
          ${raw(opts(fl, 'm1.medium'))}</select
        ><span class="error" id="master_flavor_id-error"></span>
      </div>
      <div class="field">
        <label for="node_count">Worker nodes (at most ${POLICY.maxNodesPerNodeGroup ?? 'any'})</label
        ><input id="node_count" name="node_count" type="number" min="0" value="1" /><span
          class="error"
          id="node_count-error"
        ></span>
      </div>
      <div class="field">
        <label for="flavor_id">Node flavor</label
        ><select id="flavor_id" name="flavor_id">
          <option value="">Choose…</option>
          ${raw(opts(fl, 'm1.medium'))}</select
        ><span class="error" id="flavor_id-error"></span>
      </div>
      <div class="field">
        <label for="keypair">Key pair</label>
        <div class="row">
          <select id="keypair" name="keypair">
            <option value="">Choose…</option>
            ${raw(opts(keypairs, keypairs[0]))}
          </select>
          <label for="new-keypair" class="sr-only">New key pair name</label
          ><input id="new-keypair" placeholder="new key pair name" /><button
            type="button"
            class="secondary"
            id="make-keypair"
          >
            Create key pair
          </button>
        </div>
        <span class="error" id="keypair-error"></span>
      </div>
      <p class="error" role="alert" id="create-error"></p>
      <button type="submit">Create cluster</button>
    </form>`;
  const f = document.getElementById('create');
  document.getElementById('make-keypair').addEventListener('click', async (ev) => {
    const name = document.getElementById('new-keypair').value.trim();
    if (!name) return void showErrors(f, { keypair: 'Type a name for the new key pair.' });
    ev.target.disabled = true;
    try {
      await api('POST', `${compute}/os-keypairs`, { keypair: { name } });
      f.keypair.insertAdjacentHTML('beforeend', html`<option value="${name}">${name}</option>`);
      f.keypair.value = name;
      showErrors(f, {});
    } catch (e) {
      showErrors(f, { keypair: e.message });
    } finally {
      ev.target.disabled = false;
    }
  });
  submitting(f, async () => {
    const v = Object.fromEntries(
      [
        'name',
        'cluster_template_id',
        'master_count',
        'master_flavor_id',
        'node_count',
        'flavor_id',
        'keypair',
      ].map((k) => [k, f[k].value.trim()]),
    );
    if (showErrors(f, validateCreate(v))) return;
    const body = { ...v, master_count: Number(v.master_count), node_count: Number(v.node_count) };
    try {
      const { data } = await api('POST', '/v1/clusters', body);
      location.hash = `#/cluster/${data.uuid}`;
    } catch (e) {
      formAlert(f, e.message);
    }
  });
}

// ---------- templates ----------
async function templatesView(id) {
  if (id) {
    const t = (await api('GET', `/v1/clustertemplates/${id}`)).data;
    main.innerHTML = html`<h1>Template ${t.name}</h1>
      <dl>
        ${raw(
          [
            'coe',
            'image_id',
            'network_driver',
            'master_flavor_id',
            'flavor_id',
            'external_network_id',
            'dns_nameserver',
            'public',
            'master_lb_enabled',
          ]
            .map(
              (k) =>
                html`<dt>${k}</dt>
                  <dd>${t[k]}</dd>`,
            )
            .join(''),
        )}
        <dt>Kubernetes</dt>
        <dd>${kubeTag(t)}</dd>
        <dt>Labels</dt>
        <dd>
          ${Object.entries(t.labels || {})
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')}
        </dd>
      </dl>
      <p><a href="#/templates">All templates</a></p>`;
    return;
  }
  const list = (await api('GET', '/v1/clustertemplates')).data.clustertemplates || [];
  main.innerHTML = html`<h1>Cluster templates</h1>
    <table>
      <thead>
        <tr>
          <th>Name</th>
          <th>Kubernetes</th>
          <th>Network driver</th>
          <th>Image</th>
          <th>Labels</th>
        </tr>
      </thead>
      <tbody>
        ${raw(
          list
            .map(
              (t) =>
                html`<tr>
                  <td><a href="#/template/${t.uuid}">${t.name}</a></td>
                  <td>${kubeTag(t)}</td>
                  <td>${t.network_driver}</td>
                  <td>${t.image_id}</td>
                  <td>${Object.keys(t.labels || {}).length} labels</td>
                </tr>`,
            )
            .join(''),
        )}
      </tbody>
    </table>`;
}

// ---------- operator ----------
async function operatorView() {
  const safe = (p) => p.then((r) => r.data).catch((e) => ({ error: e.message }));
  const [projects, quotas, services, inventory, clusters] = await Promise.all([
    safe(api('GET', '/identity/v3/projects')),
    safe(api('GET', '/v1/quotas?all_tenants=True')),
    safe(api('GET', '/v1/mservices')),
    safe(api('GET', '/cloud/_inventory')),
    safe(api('GET', '/v1/clusters?all_tenants=True')),
  ]);
  const tbl = (rows, cols) =>
    rows && rows.length
      ? html`<table>
          <thead>
            <tr>
              ${raw(cols.map((c) => html`<th>${c}</th>`).join(''))}
            </tr>
          </thead>
          <tbody>
            ${raw(
              rows
                .map(
                  (r) =>
                    html`<tr>
                      ${raw(cols.map((c) => html`<td>${typeof r[c] === 'object' ? JSON.stringify(r[c]) : r[c]}</td>`).join(''))}
                    </tr>`,
                )
                .join(''),
            )}
          </tbody>
        </table>`
      : '<p>None.</p>';
  const err = (x) => (x.error ? html`<p class="alert">${x.error}</p>` : '');
  main.innerHTML = html`<h1>Operator</h1>
    <h2>Projects</h2>
    ${raw(err(projects) || tbl(projects.projects, ['name', 'id', 'enabled']))}
    <h2>Clusters (all projects)</h2>
    ${raw(err(clusters) || tbl(clusters.clusters, ['name', 'project_id', 'status', 'node_count']))}
    <h2>Quotas</h2>
    ${raw(err(quotas) || tbl(quotas.quotas, ['project_id', 'resource', 'hard_limit']))}
    <h2>Controller services</h2>
    ${raw(err(services) || tbl(services.mservices, ['binary', 'host', 'state', 'updated_at']))}
    <h2>Embedded cloud inventory</h2>
    ${raw(inventory.error ? err(inventory) : html`<pre id="inventory">${JSON.stringify(inventory, null, 2)}</pre>`)}`;
  poll(5000, operatorView);
}

// ---------- routing ----------
function poll(ms, fn) {
  clearTimeout(timer);
  const hash = location.hash;
  timer = setTimeout(() => {
    if (location.hash === hash && session && document.visibilityState !== 'hidden') fn().catch(showFailure);
    else if (location.hash === hash) poll(ms, fn);
  }, ms);
}
function refresh() {
  clearTimeout(timer);
  route(true);
}
function showFailure(e) {
  if (session) {
    main.insertAdjacentHTML('afterbegin', html`<p class="alert" role="alert">${e.message}</p>`);
  }
}
async function projectsMenu() {
  const sel = document.getElementById('project-select');
  try {
    const { data } = await api('GET', '/identity/v3/auth/projects');
    sel.innerHTML = data.projects
      .map(
        (p) =>
          html`<option
            value="${p.id}"
            ${raw(session.project && p.id === session.project.id ? 'selected' : '')}
          >
            ${p.name}
          </option>`,
      )
      .join('');
  } catch {
    sel.innerHTML = '';
  }
}
async function route(keepScroll) {
  clearTimeout(timer);
  session = load();
  if (!session) {
    save(null);
    return loginView(location.hash === '#/login' ? '' : '');
  }
  document.getElementById('nav').hidden = false;
  document.getElementById('nav-operator').hidden = !session.isAdmin;
  const [, page = 'clusters', id] = (location.hash || '#/clusters').split('/');
  try {
    switch (page) {
      case 'cluster':
        await clusterView(id);
        break;
      case 'create':
        await createView();
        break;
      case 'templates':
        await templatesView();
        break;
      case 'template':
        await templatesView(id);
        break;
      case 'operator':
        await operatorView();
        break;
      default:
        await clustersView();
    }
    if (!keepScroll) main.focus();
  } catch (e) {
    main.innerHTML = html`<p class="alert" role="alert">${e.message}</p>`;
  }
}
document.getElementById('logout').addEventListener('click', logout);
document.getElementById('project-select').addEventListener('change', async (ev) => {
  try {
    const s = await issue(
      { methods: ['token'], token: { id: session.token } },
      { project: { id: ev.target.value } },
    );
    save(sessionFrom(s));
    route();
  } catch (e) {
    announce(e.message);
    alert(e.message);
  }
});
window.addEventListener('hashchange', () => route());
if (session) projectsMenu();
route();
