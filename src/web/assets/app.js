// Magnetar dashboard: a single page over the public APIs (identity v3, Magnum v1, compute).
// The token lives in sessionStorage only and travels in the X-Auth-Token header, never in a URL
// or a cookie; a cross-site page cannot make the browser attach it, so no request can be forged
// (CSRF-safe by construction).
import { makeCsr, kubeconfigYaml } from './kubeconfig.js';
import { follow } from './watch.js';
import { backupsView } from './backups.js';

const POLICY = JSON.parse(document.getElementById('policy').textContent);
const main = document.getElementById('main');
const live = document.getElementById('live');
const KEY = 'magnetar.session';
let session = load();
let timer = null;
let loginNotice = ''; // shown once above the login form (logged out, session ended)
let expiry = null; // ends the session on screen when its token expires
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
    loginNotice = 'Your session has ended; please log in again.';
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
    ${raw(msg ? html`<p class="notice" role="status" id="login-notice">${msg}</p>` : '')}
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
  loginNotice = 'You have logged out.';
  if (location.hash === '#/login') route();
  else location.hash = '#/login';
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
const CAPI = '/k8s/apis/cluster.x-k8s.io/v1beta2';
const UUID_LABEL = 'magnum.magnetar.io/cluster-uuid';
const when = (t) => (t ? new Date(t).toLocaleString() : '');
const cell = (label, value, extra = '') => html`<td data-label="${label}" ${raw(extra)}>${value}</td>`;
const head = (cols) =>
  html`<thead>
    <tr>
      ${raw(cols.map((c) => html`<th scope="col">${c}</th>`).join(''))}
    </tr>
  </thead>`;

async function clustersView() {
  const { data } = await api('GET', '/v1/clusters');
  const list = data.clusters || [];
  document.title = 'Clusters · Magnetar';
  main.innerHTML = html`<h1>Clusters</h1>
    <p><a href="#/create">Create a cluster</a></p>
    ${raw(
      list.length === 0
        ? '<p>No clusters yet.</p>'
        : html`<table id="cluster-list">
            ${raw(head(['Name', 'Status', 'Health', 'Masters', 'Nodes', 'Kubernetes']))}
            <tbody>
              ${raw(
                list
                  .map(
                    (c) =>
                      html`<tr>
                        <td data-label="Name"><a href="#/cluster/${c.uuid}">${c.name}</a></td>
                        ${raw(cell('Status', c.status, `class="status ${statusClass(c.status)}"`))}
                        ${raw(cell('Health', c.health_status || '—'))} ${raw(cell('Masters', c.master_count))}
                        ${raw(cell('Nodes', c.node_count))} ${raw(cell('Kubernetes', c.coe_version || '—'))}
                      </tr>`,
                  )
                  .join(''),
              )}
            </tbody>
          </table>`,
    )}`;
  const project = session.project && session.project.id;
  if (project) watchOnce(`${CAPI}/namespaces/${encodeURIComponent(project)}/clusters?watch=1`);
  // The watch feed redraws on every change; the timed redraw is only a safety net.
  poll(list.some((c) => statusClass(c.status) === 'busy') ? 4000 : 20000, clustersView);
}

// What this page has observed of a cluster's Magnum status, with the time it saw each change.
function observed(c) {
  const t = seen.get(c.uuid) || [];
  const last = t[t.length - 1];
  if (!last || last.status !== c.status || last.reason !== (c.status_reason || '')) {
    t.push({ at: Date.now(), status: c.status, reason: c.status_reason || '' });
    if (last) announce(`Cluster ${c.name}: ${c.status}`);
  }
  seen.set(c.uuid, t);
  return t;
}

// The readable timeline: Magnum status changes seen here, and the Cluster API conditions with
// the time each last changed (what the guide's troubleshooting section asks to look at).
function timelineEntries(c, capi) {
  const entries = observed(c).map((e) => ({
    at: e.at,
    cls: statusClass(e.status),
    text: html`<strong>${e.status}</strong>${e.reason ? ` — ${e.reason}` : ''}`,
  }));
  for (const k of (capi && capi.status && capi.status.conditions) || []) {
    const ok = k.status === 'True';
    entries.push({
      at: Date.parse(k.lastTransitionTime) || 0,
      cls: ok ? 'ok' : k.status === 'False' ? 'fail' : 'busy',
      text: html`${k.type}:
        <strong>${ok ? 'yes' : k.status === 'False' ? 'no' : 'unknown'}</strong
        >${k.reason ? ` (${k.reason})` : ''}${k.message ? ` — ${k.message}` : ''}`,
    });
  }
  return entries.sort((a, b) => a.at - b.at);
}

async function machinesOf(c) {
  const compute = endpoint('compute');
  if (!compute) return [];
  try {
    const { data } = await api('GET', `${compute}/servers/detail`);
    return (data.servers || []).filter((s) =>
      s.metadata && s.metadata.magnum_cluster
        ? s.metadata.magnum_cluster === c.uuid
        : !!c.cluster_id && s.name.startsWith(`${c.cluster_id}-`),
    );
  } catch {
    return [];
  }
}

async function capiClusterOf(c) {
  const selector = encodeURIComponent(`${UUID_LABEL}=${c.uuid}`);
  try {
    const { data } = await api(
      'GET',
      `${CAPI}/namespaces/${encodeURIComponent(c.project_id)}/clusters?labelSelector=${selector}`,
    );
    return (data.items || [])[0] || null;
  } catch {
    return null;
  }
}

// The cluster page: the forms are drawn once; the facts, tables and timeline are redrawn on
// every live update, so nothing a person is typing is lost.
let shown = null; // { c, ngs, templates } of the cluster page on screen

async function clusterView(id) {
  let c;
  try {
    c = (await api('GET', `/v1/clusters/${id}`)).data;
  } catch (e) {
    if (e.status === 404) {
      shown = null;
      document.title = 'Cluster deleted · Magnetar';
      main.innerHTML = html`<h1>Cluster deleted</h1>
        <p role="status">The cluster and every cloud resource it owned are gone.</p>
        <p><a href="#/clusters">Back to clusters</a></p>`;
      return;
    }
    throw e;
  }
  const fresh = !main.querySelector(`#cluster-page[data-id="${id}"]`) || !shown || shown.c.uuid !== id;
  const [ngs, machines, templates, capi] = await Promise.all([
    api('GET', `/v1/clusters/${id}/nodegroups`)
      .then((r) => r.data.nodegroups || [])
      .catch(() => []),
    machinesOf(c),
    // Templates change rarely: read them when the page opens, not at every live update.
    fresh
      ? api('GET', '/v1/clustertemplates')
          .then((r) => r.data.clustertemplates || [])
          .catch(() => [])
      : shown.templates,
    capiClusterOf(c),
  ]);
  if (!main.querySelector(`#cluster-page[data-id="${id}"]`)) {
    clusterSkeleton(c);
    watchOnce(
      `${CAPI}/namespaces/${encodeURIComponent(c.project_id)}/clusters?watch=1&labelSelector=${encodeURIComponent(`${UUID_LABEL}=${c.uuid}`)}`,
    );
  }
  shown = { c, ngs, templates };
  document.title = `Cluster ${c.name} (${c.status}) · Magnetar`;
  const current = templates.find((x) => x.uuid === c.cluster_template_id);
  const facts = [
    [
      'Status',
      raw(html`<span class="status ${statusClass(c.status)}" id="cluster-status">${c.status}</span>`),
    ],
    ['Reason', c.status_reason || '—'],
    [
      'Health',
      raw(
        html`${c.health_status || '—'}${raw(
          c.health_status_reason && Object.keys(c.health_status_reason).length
            ? html`<ul class="health">
                ${raw(
                  Object.entries(c.health_status_reason)
                    .map(
                      ([k, v]) =>
                        html`<li>
                          ${k.replace(/\.Ready$/, '')}: ${v === 'True' ? 'ready' : v === 'ok' ? 'ok' : v}
                        </li>`,
                    )
                    .join(''),
                )}
              </ul>`
            : '',
        )}`,
      ),
    ],
    ['Template', current ? `${current.name} (${kubeTag(current)})` : c.cluster_template_id],
    ['Kubernetes', c.coe_version || '—'],
    ['Kubernetes API', c.api_address || '—'],
    ['Master addresses', (c.master_addresses || []).join(', ') || '—'],
    ['Node addresses', (c.node_addresses || []).join(', ') || '—'],
    ['Key pair', c.keypair || '—'],
    ['Created', when(c.created_at)],
  ];
  document.getElementById('cluster-facts').innerHTML = facts
    .map(
      ([k, v]) =>
        html`<dt>${k}</dt>
          <dd>${v}</dd>`,
    )
    .join('');
  document.getElementById('ng-table').innerHTML = html`<table>
    ${raw(head(['Name', 'Role', 'Nodes', 'Flavor', 'Availability zone', 'Status']))}
    <tbody>
      ${raw(
        ngs
          .map(
            (n) =>
              html`<tr data-ng="${n.name}">
                ${raw(cell('Name', n.name))} ${raw(cell('Role', n.role))}
                ${raw(cell('Nodes', n.node_count, 'class="count"'))} ${raw(cell('Flavor', n.flavor_id))}
                ${raw(cell('Availability zone', zonesOf(n, machines)))}
                <td data-label="Status">
                  <span class="status ${statusClass(n.status)}">${n.status || ''}</span>
                  ${raw(n.status_reason && statusClass(n.status) !== 'ok' ? html`<br /><small>${n.status_reason}</small>` : '')}
                </td>
              </tr>`,
          )
          .join(''),
      )}
    </tbody>
  </table>`;
  document.getElementById('machines').innerHTML =
    machines.length === 0
      ? '<p>No machines.</p>'
      : html`<table>
          ${raw(head(['Name', 'Node group', 'State', 'Availability zone', 'Addresses']))}
          <tbody>
            ${raw(
              machines
                .map(
                  (s) =>
                    html`<tr>
                      ${raw(cell('Name', s.name))}
                      ${raw(cell('Node group', (s.metadata && s.metadata.magnum_nodegroup) || '—'))}
                      ${raw(cell('State', s.status, `class="status ${s.status === 'ACTIVE' ? 'ok' : s.status === 'ERROR' ? 'fail' : 'busy'}"`))}
                      ${raw(cell('Availability zone', s['OS-EXT-AZ:availability_zone'] || '—'))}
                      ${raw(
                        cell(
                          'Addresses',
                          Object.values(s.addresses || {})
                            .flat()
                            .map((a) => a.addr)
                            .join(', ') || '—',
                        ),
                      )}
                    </tr>`,
                )
                .join(''),
            )}
          </tbody>
        </table>`;
  document.getElementById('timeline').innerHTML = timelineEntries(c, capi)
    .map(
      (e) =>
        html`<li class="${e.cls}">
          <time>${e.at ? new Date(e.at).toLocaleTimeString() : ''}</time> ${raw(e.text)}
        </li>`,
    )
    .join('');
  // Forms that depend on the node groups and templates: keep what the person picked.
  const workers = ngs.filter((n) => n.role !== 'master');
  const pick = document.getElementById('resize-ng');
  const picked = pick.value;
  const wanted = workers.map((n) => n.name).join('\n');
  if (pick.dataset.names !== wanted) {
    pick.dataset.names = wanted;
    pick.innerHTML = workers
      .map((n) => html`<option value="${n.name}">${n.name}${n.is_default ? ' (default)' : ''}</option>`)
      .join('');
    if (workers.some((n) => n.name === picked)) pick.value = picked;
    syncResize();
  }
  const upgrades = templates.filter((x) => x.uuid !== c.cluster_template_id && upgradeAllowed(current, x));
  const target = document.getElementById('upgrade-template');
  const offered = upgrades.map((x) => x.uuid).join('\n');
  if (target.dataset.offered !== offered) {
    target.dataset.offered = offered;
    const was = target.value;
    target.innerHTML = upgrades
      .map((x) => html`<option value="${x.uuid}">${x.name} (${kubeTag(x)})</option>`)
      .join('');
    if (upgrades.some((x) => x.uuid === was)) target.value = was;
    document.getElementById('upgrade-none').hidden = upgrades.length > 0;
    target.closest('.field').hidden = upgrades.length === 0;
    document.getElementById('upgrade-submit').disabled = upgrades.length === 0;
  }
  const busy = statusClass(c.status) === 'busy' || ngs.some((n) => statusClass(n.status) === 'busy');
  poll(busy ? 4000 : 20000, () => clusterView(id));
}

// Where a node group's machines are (the list of node groups does not carry their labels).
function zonesOf(n, machines) {
  const zones = new Set(
    machines
      .filter((s) => s.metadata && s.metadata.magnum_nodegroup === n.name)
      .map((s) => s['OS-EXT-AZ:availability_zone'])
      .filter(Boolean),
  );
  if (zones.size) return [...zones].sort().join(', ');
  return (n.labels && n.labels.availability_zone) || 'any';
}

// Fill the resize count with the chosen group's size, and allow deleting only extra groups.
function syncResize() {
  const pick = document.getElementById('resize-ng');
  const n = shown && shown.ngs.find((g) => g.name === pick.value);
  const count = document.getElementById('resize-count');
  if (n && !count.dataset.dirty) count.value = n.node_count;
  document.getElementById('ng-delete').disabled = !n || n.is_default;
}

function clusterSkeleton(c) {
  const id = c.uuid;
  main.innerHTML = html`<div id="cluster-page" data-id="${id}">
    <h1>Cluster ${c.name}</h1>
    <p><a href="#/clusters">All clusters</a></p>
    <dl id="cluster-facts"></dl>
    <h2>Node groups</h2>
    <div id="ng-table"></div>
    <h2>Machines</h2>
    <div id="machines"></div>
    <h2>Timeline</h2>
    <ol class="timeline" id="timeline"></ol>
    <h2>Actions</h2>
    <div class="actions">
      <form id="ng-add" novalidate>
        <h3>Add a node group</h3>
        <div class="field">
          <label for="ng-name">Node group name</label
          ><input id="ng-name" name="ng-name" required autocomplete="off" /><span
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
          <label for="ng-az">Availability zone (optional)</label
          ><input id="ng-az" name="ng-az" placeholder="e.g. AZ-2" />
        </div>
        <p class="error" role="alert"></p>
        <button type="submit">Add node group</button>
      </form>
      <form id="ng-resize" novalidate>
        <h3>Resize or delete a node group</h3>
        <div class="field">
          <label for="resize-ng">Node group</label
          ><select id="resize-ng" name="resize-ng"></select>
        </div>
        <div class="field">
          <label for="resize-count">New size</label
          ><input id="resize-count" name="resize-count" type="number" min="0" /><span
            class="error"
            id="resize-count-error"
          ></span>
        </div>
        <p class="error" role="alert"></p>
        <div class="row">
          <button type="submit">Resize node group</button>
          <button type="button" class="danger" id="ng-delete">Delete node group</button>
        </div>
      </form>
      <form id="upgrade" novalidate>
        <h3>Upgrade</h3>
        <p id="upgrade-none" hidden>
          No valid upgrade target: Kubernetes upgrades go one minor version at a time, never backwards.
        </p>
        <div class="field">
          <label for="upgrade-template">Target template</label
          ><select id="upgrade-template" name="upgrade-template"></select>
        </div>
        <p class="error" role="alert"></p>
        <button type="submit" id="upgrade-submit">Upgrade</button>
      </form>
      <form id="kubeconfig" novalidate>
        <h3>Kubeconfig</h3>
        <p>Makes a new key in this browser and has the cluster CA sign it; the key never leaves the page.</p>
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
      </form>
    </div>
  </div>`;
  const count = document.getElementById('resize-count');
  count.addEventListener('input', () => (count.dataset.dirty = '1'));
  document.getElementById('resize-ng').addEventListener('change', () => {
    delete count.dataset.dirty;
    syncResize();
  });
  const rs = document.getElementById('ng-resize');
  submitting(rs, async () => {
    const n = Number(count.value);
    const max = POLICY.maxNodesPerNodeGroup;
    const errs = {};
    if (count.value === '' || !Number.isInteger(n) || n < 0)
      errs['resize-count'] = 'Enter a whole number of nodes.';
    else if (max !== null && n > max)
      errs['resize-count'] = `A node group holds at most ${max} nodes; add another node group instead.`;
    if (showErrors(rs, errs)) return;
    formAlert(rs, '');
    try {
      await api('POST', `/v1/clusters/${id}/actions/resize`, {
        node_count: n,
        nodegroup: rs['resize-ng'].value,
      });
      delete count.dataset.dirty;
      announce(`Resizing ${rs['resize-ng'].value} to ${n} nodes.`);
      refresh();
    } catch (e) {
      formAlert(rs, e.message);
    }
  });
  const delNg = document.getElementById('ng-delete');
  delNg.addEventListener('click', async () => {
    const name = rs['resize-ng'].value;
    if (!name || !confirm(`Delete node group ${name} and its machines?`)) return;
    delNg.disabled = true;
    try {
      await api('DELETE', `/v1/clusters/${id}/nodegroups/${encodeURIComponent(name)}`);
      announce(`Deleting node group ${name}.`);
      refresh();
    } catch (e) {
      formAlert(rs, e.message);
      delNg.disabled = false;
    }
  });
  const add = document.getElementById('ng-add');
  submitting(add, async () => {
    const errs = {};
    const count = Number(add['ng-count'].value);
    if (!/^[A-Za-z][A-Za-z0-9_.-]*$/.test(add['ng-name'].value))
      errs['ng-name'] = 'Start with a letter; use letters, digits, dot, dash or underscore.';
    else if (shown && shown.ngs.some((n) => n.name === add['ng-name'].value))
      errs['ng-name'] = 'This cluster already has a node group of that name.';
    if (!Number.isInteger(count) || count < 1) errs['ng-count'] = 'Enter at least 1 node.';
    else if (POLICY.maxNodesPerNodeGroup !== null && count > POLICY.maxNodesPerNodeGroup)
      errs['ng-count'] = `A node group holds at most ${POLICY.maxNodesPerNodeGroup} nodes.`;
    if (showErrors(add, errs)) return;
    formAlert(add, '');
    const body = { name: add['ng-name'].value, node_count: count, role: 'worker' };
    if (add['ng-flavor'].value.trim()) body.flavor_id = add['ng-flavor'].value.trim();
    if (add['ng-az'].value.trim()) body.labels = { availability_zone: add['ng-az'].value.trim() };
    try {
      await api('POST', `/v1/clusters/${id}/nodegroups`, body);
      announce(`Adding node group ${body.name}.`);
      add.reset();
      refresh();
    } catch (e) {
      formAlert(add, e.message);
    }
  });
  const up = document.getElementById('upgrade');
  submitting(up, async () => {
    if (!up['upgrade-template'].value) return;
    formAlert(up, '');
    try {
      await api('POST', `/v1/clusters/${id}/actions/upgrade`, {
        cluster_template: up['upgrade-template'].value,
      });
      announce('Upgrade started.');
      refresh();
    } catch (e) {
      formAlert(up, e.message);
    }
  });
  const kc = document.getElementById('kubeconfig');
  submitting(kc, async () => {
    formAlert(kc, '');
    try {
      await downloadKubeconfig(shown.c);
    } catch (e) {
      formAlert(kc, e.message);
    }
  });
  const del = document.getElementById('delete');
  submitting(del, async () => {
    const name = shown.c.name;
    if (del['confirm-name'].value !== name)
      return void showErrors(del, { 'confirm-name': `Type ${name} exactly to delete it.` });
    showErrors(del, {});
    try {
      await api('DELETE', `/v1/clusters/${id}`);
      announce(`Deleting ${name}.`);
      refresh();
    } catch (e) {
      showErrors(del, { 'confirm-name': e.message });
    }
  });
}

function kubeTag(t) {
  return (t && ((t.labels && t.labels.kube_tag) || t.coe_version)) || '';
}
function versionOf(tag) {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(String(tag || '').trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] || 0)] : null;
}
// The server's rule (domain policy): never backwards, at most one minor version ahead.
function upgradeAllowed(from, to) {
  const a = versionOf(kubeTag(from)),
    b = versionOf(kubeTag(to));
  if (!a || !b || a[0] !== b[0] || b[1] > a[1] + 1) return false;
  return (b[1] - a[1] || b[2] - a[2]) >= 0;
}

async function downloadKubeconfig(c) {
  if (!c.api_address)
    throw new Error('The cluster has no Kubernetes API address yet; wait until it is created.');
  const { csr, key } = await makeCsr('admin', 'system:masters');
  const ca = (await api('GET', `/v1/certificates/${c.uuid}`)).data.pem;
  const cert = (await api('POST', '/v1/certificates', { cluster_uuid: c.uuid, csr })).data.pem;
  const yaml = kubeconfigYaml({ name: c.name, server: c.api_address, ca, cert, key });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([yaml], { type: 'application/yaml' }));
  a.download = `${c.name}.kubeconfig`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
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
// Kinds of the embedded cloud's inventory, in the words of its services.
const KIND_WORDS = {
  Flavor: 'Flavors',
  Keypair: 'Key pairs',
  Server: 'Servers',
  Image: 'Images',
  Network: 'Networks',
  Subnet: 'Subnets',
  Port: 'Ports',
  Router: 'Routers',
  SecurityGroup: 'Security groups',
  SecurityGroupRule: 'Security group rules',
  FloatingIp: 'Floating IPs',
  LoadBalancer: 'Load balancers',
  Listener: 'Listeners',
  Pool: 'Pools',
  Member: 'Pool members',
  HealthMonitor: 'Health monitors',
  Volume: 'Volumes',
  Container: 'Object containers',
  StoredObject: 'Objects',
};
async function operatorView() {
  const safe = (p) => p.then((r) => r.data).catch((e) => ({ error: e.message }));
  const [projects, quotas, services, inventory, clusters, users] = await Promise.all([
    safe(api('GET', '/identity/v3/projects')),
    safe(api('GET', '/v1/quotas?all_tenants=True')),
    safe(api('GET', '/v1/mservices')),
    safe(api('GET', '/cloud/_inventory')),
    safe(api('GET', '/v1/clusters?all_tenants=True')),
    safe(api('GET', '/identity/v3/users')),
  ]);
  const names = new Map((projects.projects || []).map((p) => [p.id, p.name]));
  // Key pairs belong to users, flavors to nobody: the inventory files them under those ids.
  for (const u of users.users || []) names.set(u.id, `user ${u.name}`);
  const projectName = (id) => names.get(id) || id || 'shared (flavors)';
  const tbl = (rows, cols) =>
    rows && rows.length
      ? html`<table>
          ${raw(head(cols.map((c) => c[0])))}
          <tbody>
            ${raw(
              rows
                .map(
                  (r) =>
                    html`<tr>
                      ${raw(cols.map(([label, f]) => cell(label, f(r))).join(''))}
                    </tr>`,
                )
                .join(''),
            )}
          </tbody>
        </table>`
      : '<p>None.</p>';
  const err = (x) => (x.error ? html`<p class="alert">${x.error}</p>` : '');
  const perProject = (clusters.clusters || []).reduce(
    (m, c) => m.set(c.project_id, (m.get(c.project_id) || 0) + 1),
    new Map(),
  );
  const inv = Object.entries((inventory && inventory.projects) || {}).sort(([a], [b]) =>
    projectName(a).localeCompare(projectName(b)),
  );
  document.title = 'Operator · Magnetar';
  main.innerHTML = html`<h1>Operator</h1>
    <h2 id="op-projects">Projects</h2>
    ${raw(
      err(projects) ||
        tbl(projects.projects, [
          ['Name', (p) => p.name],
          ['ID', (p) => p.id],
          ['Enabled', (p) => (p.enabled ? 'yes' : 'no')],
          ['Clusters', (p) => perProject.get(p.id) || 0],
        ]),
    )}
    <h2 id="op-clusters">Clusters (all projects)</h2>
    ${raw(
      err(clusters) ||
        tbl(clusters.clusters, [
          ['Name', (c) => c.name],
          ['Project', (c) => projectName(c.project_id)],
          ['Status', (c) => c.status],
          ['Masters', (c) => c.master_count],
          ['Nodes', (c) => c.node_count],
        ]),
    )}
    <h2 id="op-quotas">Quotas</h2>
    ${raw(
      err(quotas) ||
        tbl(quotas.quotas, [
          ['Project', (q) => projectName(q.project_id)],
          ['Resource', (q) => q.resource],
          ['Limit', (q) => q.hard_limit],
        ]),
    )}
    <h2 id="op-services">Controller services</h2>
    ${raw(
      err(services) ||
        tbl(services.mservices, [
          ['Service', (s) => s.binary],
          ['Host', (s) => s.host],
          ['State', (s) => s.state],
          ['Reported', (s) => when(s.updated_at || s.created_at)],
        ]),
    )}
    <h2>Embedded cloud inventory</h2>
    ${raw(
      inventory.error
        ? err(inventory)
        : html`<div id="inventory">
            <p>${inventory.total} resources in ${inv.length} projects or users.</p>
            ${raw(
              inv
                .map(
                  ([id, kinds]) =>
                    html`<section class="inventory" data-project="${projectName(id)}">
                      <h3>${projectName(id)}</h3>
                      ${raw(
                        tbl(
                          Object.entries(kinds).map(([kind, items]) => ({ kind, items })),
                          [
                            ['Kind', (r) => KIND_WORDS[r.kind] || r.kind],
                            ['Count', (r) => r.items.length],
                            [
                              'Names',
                              (r) =>
                                [...new Set(r.items.map((i) => i.name || '(unnamed)'))]
                                  .slice(0, 6)
                                  .join(', ') + (r.items.length > 6 ? ', …' : ''),
                            ],
                          ],
                        ),
                      )}
                    </section>`,
                )
                .join(''),
            )}
          </div>`,
    )}`;
  watchOnce(`${CAPI}/clusters?watch=1`);
  poll(10000, operatorView);
}

// ---------- routing ----------
// Each page draws itself, then asks to be drawn again: soon after a watch event, or after `ms`
// as a safety net. Only the page whose address is still shown is redrawn, one draw at a time.
let view = null; // { hash, fn, ms } of the page on screen
let drawing = false;
let stopWatch = null; // the open watch of the page on screen
function poll(ms, fn) {
  clearTimeout(timer);
  view = { hash: location.hash, fn, ms };
  timer = setTimeout(redraw, ms);
}
function redraw() {
  const v = view;
  if (!v || location.hash !== v.hash || !session) return;
  if (drawing || document.visibilityState === 'hidden') {
    timer = setTimeout(redraw, drawing ? 100 : v.ms);
    return;
  }
  drawing = true;
  v.fn()
    .catch(showFailure)
    .finally(() => (drawing = false));
}
// A change arrived on the watch feed: redraw shortly (changes come in bursts).
function soon() {
  if (!view || location.hash !== view.hash) return;
  clearTimeout(timer);
  timer = setTimeout(redraw, 150);
}
// Follow one watch URL while this page is shown (route() stops it on the next navigation).
function watchOnce(url) {
  if (stopWatch) return;
  stopWatch = follow(
    url,
    () => ({ accept: 'application/json', 'x-auth-token': session ? session.token : '' }),
    soon,
  );
}
function refresh() {
  clearTimeout(timer);
  soon();
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
// ---------- backups (the page itself is in backups.js) ----------
function backupsPage() {
  return backupsView({
    main,
    api,
    html,
    raw,
    statusClass,
    announce,
    when,
    poll: (ms) => poll(ms, backupsPage),
    redraw: backupsPage,
  });
}

async function route(keepScroll) {
  clearTimeout(timer);
  view = null;
  if (stopWatch) stopWatch();
  stopWatch = null;
  session = load();
  if (!session) {
    save(null);
    const notice = loginNotice;
    loginNotice = '';
    return loginView(notice);
  }
  clearTimeout(expiry);
  expiry = setTimeout(
    () => {
      save(null);
      loginNotice = 'Your session has ended; please log in again.';
      route();
    },
    Math.min(Date.parse(session.expires) - Date.now(), 2 ** 31 - 1),
  );
  document.getElementById('nav').hidden = false;
  document.getElementById('nav-operator').hidden = !session.isAdmin;
  const [, page = 'clusters', id] = (location.hash || '#/clusters').split('/');
  for (const a of document.querySelectorAll('#nav a')) {
    const target = a.getAttribute('href').slice(2);
    if (target === page || (target === 'clusters' && page === 'cluster'))
      a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
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
      case 'backups':
        await backupsPage();
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
// The skip link moves the focus without touching the address (which names the page).
document.querySelector('.skip').addEventListener('click', (ev) => {
  ev.preventDefault();
  main.focus();
});
if (session) projectsMenu();
route();
