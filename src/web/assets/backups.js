// Backups page of the dashboard: etcd backups of the project's clusters (the Magnetar extension
// /v1/backups and /v1/clusters/{cluster}/backups). Everything it needs from the page arrives in
// `ui`, so this module has no state of its own besides what it draws.

const size = (n) =>
  n === null || n === undefined ? '—' : n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`;

/**
 * Draw the backups page.
 * @param {{ main: HTMLElement, api: Function, html: Function, raw: Function, statusClass: Function,
 *   announce: Function, poll: Function, when: Function, redraw: () => Promise<void> }} ui
 */
export async function backupsView(ui) {
  const { main, api, html, raw, statusClass, when } = ui;
  const [{ data: b }, { data: c }] = await Promise.all([
    api('GET', '/v1/backups'),
    api('GET', '/v1/clusters'),
  ]);
  const backups = (b.backups || []).slice().reverse();
  const clusters = c.clusters || [];
  const running = clusters.filter((x) => /_COMPLETE$/.test(x.status));
  const names = new Map(clusters.map((x) => [x.uuid, x.name]));
  document.title = 'Backups · Magnetar';
  const status = (x) => (x === 'COMPLETE' ? 'CREATE_COMPLETE' : x === 'FAILED' ? 'CREATE_FAILED' : x);
  main.innerHTML = html`<h1>etcd backups</h1>
    <p>
      Snapshots of your clusters' etcd state, encrypted before they are stored in your project's object store
      (container <code>magnetar-etcd-backups</code>) and verified after upload.
    </p>
    <form id="backup-create" novalidate>
      <div class="field">
        <label for="backup-cluster">Cluster</label>
        <select id="backup-cluster" name="cluster" ${raw(running.length ? '' : 'disabled')}>
          ${raw(running.map((x) => html`<option value="${x.uuid}">${x.name}</option>`).join(''))}
        </select>
      </div>
      <button type="submit" ${raw(running.length ? '' : 'disabled')}>Back up now</button>
      ${raw(running.length ? '' : '<p>No running cluster to back up.</p>')}
    </form>
    ${raw(
      backups.length === 0
        ? '<p id="backup-empty">No backups yet.</p>'
        : html`<table id="backup-list">
            <thead>
              <tr>
                ${raw(
                  ['Cluster', 'Taken', 'Why', 'Status', 'Revision', 'Keys', 'Size', 'Restore', 'Actions']
                    .map((h) => html`<th scope="col">${h}</th>`)
                    .join(''),
                )}
              </tr>
            </thead>
            <tbody>
              ${raw(
                backups
                  .map((x) => {
                    const alive = names.has(x.cluster_uuid);
                    const targets = alive
                      ? [[x.cluster_uuid, x.cluster_name]]
                      : running.map((r) => [r.uuid, r.name]);
                    return html`<tr data-backup="${x.uuid}">
                      <td data-label="Cluster">
                        ${x.cluster_name}${raw(alive ? '' : ' <em>(deleted)</em>')}
                      </td>
                      <td data-label="Taken">${when(x.created_at)}</td>
                      <td data-label="Why">${x.trigger}</td>
                      <td
                        data-label="Status"
                        class="status ${statusClass(status(x.status))}"
                        title="${x.status_reason || ''}"
                      >
                        ${x.status}${raw(x.emulated ? ' <small>(emulated)</small>' : '')}
                      </td>
                      <td data-label="Revision">${x.etcd_revision ?? '—'}</td>
                      <td data-label="Keys">${x.total_keys ?? '—'}</td>
                      <td data-label="Size">${size(x.size)}</td>
                      <td data-label="Restore" title="${x.restore_status_reason || ''}">
                        ${x.restore_status || '—'}
                      </td>
                      <td data-label="Actions">
                        ${raw(
                          x.status === 'COMPLETE' && targets.length
                            ? html`<label class="sr-only" for="into-${x.uuid}">Restore into</label>
                                <select id="into-${x.uuid}" data-into>
                                  ${raw(targets.map(([u, n]) => html`<option value="${u}">${n}</option>`).join(''))}
                                </select>
                                <button type="button" data-restore="${x.uuid}">Restore</button>`
                            : '',
                        )}
                        <button type="button" data-delete="${x.uuid}">Delete</button>
                      </td>
                    </tr>`;
                  })
                  .join(''),
              )}
            </tbody>
          </table>`,
    )}`;

  const act = async (fn, done) => {
    try {
      await fn();
      ui.announce(done);
      await ui.redraw();
    } catch (e) {
      main.insertAdjacentHTML('afterbegin', html`<p class="alert" role="alert">${e.message}</p>`);
    }
  };
  document.getElementById('backup-create').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const cluster = ev.target.elements.cluster.value;
    void act(() => api('POST', `/v1/clusters/${encodeURIComponent(cluster)}/backups`), 'Backup started.');
  });
  for (const btn of main.querySelectorAll('[data-restore]')) {
    btn.addEventListener('click', () => {
      const id = btn.getAttribute('data-restore');
      const into = btn.parentElement.querySelector('[data-into]').value;
      const name = names.get(into) || into;
      if (
        !confirm(
          `Restore cluster ${name} from this backup? Its current state is replaced and its control plane rebuilt.`,
        )
      )
        return;
      void act(
        () =>
          api(
            'POST',
            `/v1/clusters/${encodeURIComponent(into)}/backups/${encodeURIComponent(id)}/actions/restore`,
          ),
        'Restore started.',
      );
    });
  }
  for (const btn of main.querySelectorAll('[data-delete]')) {
    btn.addEventListener('click', () => {
      if (!confirm('Delete this backup and its stored snapshot?')) return;
      void act(
        () => api('DELETE', `/v1/backups/${encodeURIComponent(btn.getAttribute('data-delete'))}`),
        'Backup deleted.',
      );
    });
  }
  const busy = backups.some(
    (x) => x.status === 'CREATE_IN_PROGRESS' || x.restore_status === 'RESTORE_IN_PROGRESS',
  );
  ui.poll(busy ? 2000 : 20000);
}
