// Batches: start one, list recent ones, and follow one live.
import { get, post, stream } from './api.js';
import { navigate } from './router.js';
import { badge, busy, errorBox, field, formatTime, h, table } from './dom.js';

export async function batchesView(container, { signal }) {
  container.append(h('div', { class: 'page-head' }, h('h1', {}, 'Batches')));
  const [plugins, projects, batches] = await Promise.all([
    get('/plugins', signal),
    get('/projects', signal),
    get('/batches?limit=25', signal),
  ]);
  container.append(
    startForm(
      plugins.filter((p) => p.enabled),
      projects,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'batches-title' },
      h('h2', { id: 'batches-title' }, 'Recent batches'),
      table(
        ['Batch', 'Plugin', 'State', 'Progress', 'Started'],
        batches.map((b) => [
          h('a', { href: `#/batches/${encodeURIComponent(b.batchId)}` }, h('code', {}, b.batchId)),
          b.pluginId,
          badge(b.state),
          `${b.succeeded} succeeded, ${b.failed} failed, ${b.pending} pending of ${b.total}`,
          `${formatTime(b.createdAt)} by ${b.createdBy ?? '—'}`,
        ]),
        { testid: 'batches-table', class: 'data' },
      ),
    ),
  );
}

function startForm(plugins, projects) {
  const errors = errorBox('batch-start-error');
  const plugin = h(
    'select',
    { required: true, testid: 'batch-plugin' },
    plugins.map((p) => h('option', { value: p.id }, `${p.name} (${p.id})`)),
  );
  const all = h('input', {
    type: 'radio',
    name: 'batch-scope',
    id: 'batch-all',
    value: 'all',
    checked: true,
    testid: 'batch-all',
  });
  const some = h('input', {
    type: 'radio',
    name: 'batch-scope',
    id: 'batch-some',
    value: 'some',
    testid: 'batch-some',
  });
  const pick = h(
    'select',
    {
      multiple: true,
      size: String(Math.min(8, Math.max(3, projects.length))),
      disabled: true,
      testid: 'batch-projects',
    },
    projects.map((p) =>
      h('option', { value: p.id }, `${p.displayName} (${p.id})${p.trusted ? '' : ' — not trusted'}`),
    ),
  );
  const sync = () => {
    pick.disabled = !some.checked;
  };
  all.addEventListener('change', sync);
  some.addEventListener('change', sync);
  const button = h(
    'button',
    { type: 'submit', class: 'primary', disabled: plugins.length === 0, testid: 'batch-start' },
    'Start batch',
  );
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'batch-start-title' },
    h('h2', { id: 'batch-start-title' }, 'Inspect projects'),
    plugins.length === 0
      ? h('p', { class: 'notice' }, 'No plugin is enabled. Review and enable one on the Plugins page first.')
      : null,
    field('Plugin (enabled plugins only)', plugin),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Projects'),
      h('div', { class: 'check' }, all, h('label', { for: 'batch-all' }, 'All trusted projects')),
      h(
        'div',
        { class: 'check' },
        some,
        h('label', { for: 'batch-some' }, 'Only the projects selected below'),
      ),
      field('Selected projects (Ctrl/Cmd-click for several)', pick),
    ),
    h('div', { class: 'actions' }, button),
    errors.el,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = [...pick.selectedOptions].map((o) => o.value);
    if (some.checked && chosen.length === 0) {
      errors.show(new Error('Select at least one project, or choose all trusted projects.'));
      return;
    }
    void busy(button, errors, async () => {
      const batch = await post('/batches', {
        pluginId: plugin.value,
        projects: some.checked ? chosen : 'all',
      });
      navigate(`#/batches/${encodeURIComponent(batch.batchId)}`);
    });
  });
  return form;
}

export async function batchView(container, { signal, params: [id] }) {
  const path = `/batches/${encodeURIComponent(id)}`;
  const title = h('h1', {}, 'Batch ', h('code', {}, id));
  const state = h('span', { testid: 'batch-state' });
  const bar = h('progress', {
    max: '1',
    value: '0',
    testid: 'batch-progress',
    'aria-labelledby': 'batch-progress-label',
  });
  const label = h(
    'p',
    { id: 'batch-progress-label', class: 'progress-label', testid: 'batch-progress-label' },
    'Loading…',
  );
  const meta = h('p', { class: 'muted' });
  const failuresOnly = h('input', { type: 'checkbox', id: 'failures-only', testid: 'failures-only' });
  const results = h('div', { testid: 'batch-results' });
  const streamNote = h('p', { class: 'hint', role: 'status' });
  const progressCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'batch-progress-label', testid: 'batch-progress-card' },
    label,
    bar,
    meta,
    streamNote,
  );
  let latest;

  container.append(
    h('div', { class: 'page-head' }, title, state),
    h('p', {}, h('a', { href: '#/batches' }, '← All batches')),
    progressCard,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'batch-results-title' },
      h(
        'div',
        { class: 'page-head' },
        h('h2', { id: 'batch-results-title' }, 'Results per project'),
        h('div', { class: 'check' }, failuresOnly, h('label', { for: 'failures-only' }, 'Failures only')),
      ),
      results,
    ),
  );
  failuresOnly.addEventListener('change', () => latest && showResults(latest));

  const showProgress = (p) => {
    const done = p.succeeded + p.failed;
    bar.max = Math.max(1, p.total);
    bar.value = done;
    label.textContent = `${done} of ${p.total} projects done — ${p.succeeded} succeeded, ${p.failed} failed, ${p.pending} pending`;
    state.replaceChildren(badge(p.state));
  };
  const showResults = (batch) => {
    latest = batch;
    const rows = (batch.results ?? []).filter((r) => !failuresOnly.checked || r.status === 'failed');
    results.replaceChildren(
      table(
        ['Project', 'Status', 'Summary', 'Facts', 'Error'],
        rows.map((r) => [
          h('code', {}, r.projectId),
          badge(r.status),
          r.result?.summary ?? '',
          factsList(r.result?.facts),
          r.error
            ? h('span', { class: 'error-text' }, h('code', {}, r.error.code), ' ', r.error.message)
            : '',
        ]),
        { class: 'data', testid: 'batch-results-table' },
      ),
    );
  };
  const showBatch = (batch) => {
    showProgress(batch);
    meta.textContent = `Plugin ${batch.pluginId} · started ${formatTime(batch.createdAt)} by ${batch.createdBy ?? '—'}${
      batch.finishedAt ? ` · finished ${formatTime(batch.finishedAt)}` : ''
    }`;
    showResults(batch);
  };

  const first = await get(path, signal);
  showBatch(first);
  if (first.state !== 'running') return;

  let finished = false;
  progressCard.dataset.live = 'stream';
  try {
    await stream(
      `${path}/events`,
      (name, data) => {
        if (name === 'progress') showProgress(data);
        if (name === 'done') {
          finished = true;
          showBatch(data);
        }
      },
      signal,
    );
  } catch (error) {
    if (signal.aborted || error?.signedOut) return;
    streamNote.textContent = `Live stream unavailable (${error.message}); polling every second.`;
  }
  if (!finished) progressCard.dataset.live = 'poll';
  // No done event (stream failed or ended early): poll until finished.
  while (!finished && !signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (signal.aborted) return;
    const batch = await get(path, signal);
    showBatch(batch);
    finished = batch.state !== 'running';
  }
}

function factsList(facts) {
  if (!Array.isArray(facts) || facts.length === 0) return h('span', { class: 'muted' }, 'none');
  return h(
    'ul',
    { class: 'facts-list' },
    facts.map((f) =>
      h(
        'li',
        {},
        h('strong', {}, f.label ?? f.id),
        ': ',
        typeof f.value === 'string' ? f.value : JSON.stringify(f.value),
        f.source ? h('span', { class: 'sub' }, ` (${f.source})`) : null,
      ),
    ),
  );
}
