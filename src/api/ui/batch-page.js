// @ts-check
// One batch, live: a bar that shows failures (green succeeded, red failed,
// grey cancelled), per-project rows as soon as each call ends (the event
// stream's `outcomes`), Cancel and Retry (failed) buttons, and the comparison
// with the previous batch of the same plugin.
import { get, post } from './api.js';
import { follow } from './live.js';
import { navigate } from './router.js';
import { badge, busy, errorBox, formatTime, h, table } from './dom.js';
import { can, currentUser } from './session.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf, EventOf } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'getBatch'>} Batch */
/** @typedef {EventOf<'batchEvents', 'outcomes'>[number]} Outcome */
/** @typedef {AnswerOf<'diffBatches'>['projects'][number]['added'][number]} Fact */

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context `params`: the batch id
 */
export async function batchView(container, { signal, params: [id] }) {
  const path = `/batches/${encodeURIComponent(/** @type {string} */ (id))}`;
  const state = h('span', { testid: 'batch-state' });
  /** @param {'succeeded' | 'failed' | 'cancelled'} kind */
  const segment = (kind) => h('span', { class: `bar-seg bar-${kind}`, testid: `bar-${kind}` });
  const segments = {
    succeeded: segment('succeeded'),
    failed: segment('failed'),
    cancelled: segment('cancelled'),
  };
  const bar = h(
    'div',
    {
      class: 'batch-bar',
      role: 'progressbar',
      testid: 'batch-progress',
      'aria-labelledby': 'batch-progress-label',
      'aria-valuemin': '0',
    },
    segments.succeeded,
    segments.failed,
    segments.cancelled,
  );
  const label = h(
    'p',
    { id: 'batch-progress-label', class: 'progress-label', testid: 'batch-progress-label' },
    'Loading…',
  );
  const failures = h('p', { class: 'failure-count', testid: 'batch-failures', role: 'status' });
  const meta = h('p', { class: 'muted' });
  const streamNote = h('p', { class: 'hint', role: 'status' });
  const errors = errorBox('batch-action-error');
  const cancel = h(
    'button',
    { type: 'button', class: 'danger', testid: 'batch-cancel', hidden: true },
    'Cancel batch',
  );
  const retry = h('button', { type: 'button', testid: 'batch-retry', hidden: true }, 'Retry failed');
  const failuresOnly = h('input', { type: 'checkbox', id: 'failures-only', testid: 'failures-only' });
  const results = h('div', { testid: 'batch-results' });
  const compare = h('section', {
    class: 'card',
    'aria-labelledby': 'batch-diff-title',
    testid: 'batch-diff',
  });
  const progressCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'batch-progress-label', testid: 'batch-progress-card' },
    label,
    bar,
    failures,
    meta,
    h('div', { class: 'actions' }, cancel, retry),
    errors.el,
    streamNote,
  );
  const loading = h('p', { class: 'muted', testid: 'batch-loading' }, 'Loading…');
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Batch ', h('code', {}, id)), state),
    h('p', {}, h('a', { href: '#/batches' }, '← All batches')),
    loading,
  );
  const cards = [
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
    compare,
  ];

  let operator = false;
  /** projectId → outcome; filled by the first read, then by each `outcomes` event. */
  /** @type {Map<string, Outcome>} */
  const outcomes = new Map();
  /** @param {AnswerOf<'cancelBatch'>} p a batch's counts and state (a batch view has them too) */
  const showProgress = (p) => {
    const cancelled = p.cancelled ?? 0;
    const done = p.succeeded + p.failed + cancelled;
    const total = Math.max(1, p.total);
    /** @type {['succeeded' | 'failed' | 'cancelled', number][]} */
    const counts = [
      ['succeeded', p.succeeded],
      ['failed', p.failed],
      ['cancelled', cancelled],
    ];
    for (const [kind, count] of counts) segments[kind].style.width = `${(100 * count) / total}%`;
    bar.setAttribute('aria-valuemax', String(p.total));
    bar.setAttribute('aria-valuenow', String(done));
    bar.dataset.failed = String(p.failed);
    label.textContent = `${done} of ${p.total} projects done — ${p.succeeded} succeeded, ${p.failed} failed${
      cancelled ? `, ${cancelled} cancelled` : ''
    }, ${p.pending} pending`;
    // "so far" only while calls may still fail.
    failures.textContent = p.failed > 0 ? `${p.failed} failed${p.state === 'running' ? ' so far' : ''}` : '';
    failures.hidden = p.failed === 0;
    state.replaceChildren(badge(p.state));
    const running = p.state === 'running';
    // Cancel and Retry need the operator role (operator = false until the role is known).
    cancel.hidden = !running || !operator;
    retry.hidden = running || p.failed + cancelled === 0 || !operator;
  };
  const showResults = () => {
    const rows = [...outcomes.values()]
      .filter((r) => !failuresOnly.checked || r.status !== 'succeeded')
      .sort((a, b) => a.projectId.localeCompare(b.projectId));
    results.replaceChildren(
      table(
        ['Project', 'Status', 'Summary', 'Facts', 'Error'],
        rows.map((r) => [
          h('code', {}, r.projectId),
          badge(r.status),
          // `redacted` is not in the contract's inspect result (the api does not send it yet); read as before
          /** @type {{ redacted?: boolean } | undefined} */ (r.result)?.redacted
            ? h(
                'span',
                {},
                r.result.summary,
                ' ',
                h(
                  'span',
                  { class: 'muted', title: 'the host replaced a secret in this result' },
                  '(redacted)',
                ),
              )
            : (r.result?.summary ?? ''),
          factsList(r.result?.facts),
          r.error
            ? h('span', { class: 'error-text' }, h('code', {}, r.error.code), ' ', r.error.message)
            : '',
        ]),
        { class: 'data', testid: 'batch-results-table' },
      ),
    );
  };
  /** @param {Outcome[] | undefined} list */
  const addOutcomes = (list) => {
    for (const outcome of list ?? []) outcomes.set(outcome.projectId, outcome);
    showResults();
  };
  /** @param {Batch} batch */
  const showBatch = (batch) => {
    showProgress(batch);
    meta.textContent = `Plugin ${batch.pluginId} · started ${formatTime(batch.createdAt)} by ${batch.createdBy ?? '—'}${
      batch.finishedAt ? ` · finished ${formatTime(batch.finishedAt)}` : ''
    }${batch.retryOf ? ` · retry of ${batch.retryOf}` : ''}`;
    addOutcomes(batch.results);
  };
  failuresOnly.addEventListener('change', showResults);
  cancel.addEventListener('click', () =>
    busy(cancel, errors, async () => {
      showBatch(/** @type {AnswerOf<'cancelBatch'>} */ (await post(`${path}/cancel`)));
    }),
  );
  retry.addEventListener('click', () =>
    busy(retry, errors, async () => {
      /** @type {AnswerOf<'retryBatch'>} */
      const next = await post(`${path}/retry`, { failedOnly: true });
      navigate(`#/batches/${encodeURIComponent(next.batchId)}`);
    }),
  );

  // The cards appear once the batch is read: an unknown id leaves only the error the shell shows.
  /** @type {Batch} */
  let first;
  try {
    [first, operator] = await Promise.all([
      get(path, signal),
      currentUser(signal).then((user) => can(user, 'operator')),
    ]);
  } finally {
    loading.remove();
  }
  container.append(...cards);
  showBatch(first);
  void showComparison(compare, path, signal);
  if (first.state !== 'running') return;

  const followed = await follow({
    path,
    signal,
    everyMs: 1000,
    onEvent: (name, data) => {
      // the stream's data per event name: EventOf<'batchEvents', name>
      if (name === 'progress') showProgress(/** @type {EventOf<'batchEvents', 'progress'>} */ (data));
      if (name === 'outcomes') addOutcomes(/** @type {EventOf<'batchEvents', 'outcomes'>} */ (data));
      if (name === 'done') showBatch(/** @type {EventOf<'batchEvents', 'done'>} */ (data));
    },
    // No done event (stream failed or ended early): read until finished.
    read: async () => {
      /** @type {Batch} */
      const batch = await get(path, signal);
      showBatch(batch);
      return batch.state !== 'running';
    },
    onMode: (mode, error) => {
      progressCard.dataset.live = mode;
      if (error) streamNote.textContent = `Live stream unavailable (${error.message}); polling every second.`;
    },
  });
  if (followed) void showComparison(compare, path, signal);
}

/**
 * "Compare with the previous batch of this plugin": the diff, project by project.
 * @param {HTMLElement} section
 * @param {string} path the batch's, under /api/v1
 * @param {AbortSignal} signal
 */
async function showComparison(section, path, signal) {
  const title = h('h2', { id: 'batch-diff-title' }, 'Compared with the previous batch of this plugin');
  /** @type {AnswerOf<'previousBatch'>} */
  const { previous } = await get(`${path}/previous`, signal);
  if (!previous) {
    section.replaceChildren(title, h('p', { class: 'muted' }, 'No earlier batch of this plugin is kept.'));
    return;
  }
  /** @type {AnswerOf<'diffBatches'>} */
  const diff = await get(`${path}/diff?from=${encodeURIComponent(previous.batchId)}`, signal);
  const link = h(
    'a',
    { href: `#/batches/${encodeURIComponent(previous.batchId)}` },
    h('code', {}, previous.batchId),
  );
  const lede = h(
    'p',
    { testid: 'batch-diff-summary' },
    diff.projects.length === 0
      ? 'No difference from '
      : `${diff.projects.length} project${diff.projects.length === 1 ? '' : 's'} changed since `,
    link,
    ` (${formatTime(previous.createdAt)}).`,
  );
  section.replaceChildren(
    title,
    lede,
    // no table when nothing changed (replaceChildren would print a null as the text "null")
    ...(diff.projects.length === 0
      ? []
      : [
          table(
            ['Project', 'Status', 'Added', 'Removed', 'Changed'],
            diff.projects.map((p) => [
              h('code', {}, p.projectId),
              p.status.from === p.status.to ? p.status.to : `${p.status.from} → ${p.status.to}`,
              factsList(p.added),
              factsList(p.removed),
              p.changed.length === 0
                ? h('span', { class: 'muted' }, 'none')
                : h(
                    'ul',
                    { class: 'facts-list' },
                    p.changed.map((c) => h('li', {}, h('strong', {}, c.id), `: ${c.from} → ${c.to}`)),
                  ),
            ]),
            { class: 'data', testid: 'batch-diff-table' },
          ),
        ]),
  );
}

/** @param {Fact[] | undefined} facts */
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
