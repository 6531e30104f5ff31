// @ts-check
// One batch, live and at any size: the counts at the top (a bar that shows
// failures, and status chips that filter the rows), the comparison with
// another batch of the same plugin, then the per-project rows one server
// page at a time, failures first (batch-rows.js). Cancel and Retry (failed)
// buttons. While the batch runs the event stream moves the counts, and new
// outcomes re-read the page shown.
import { post } from './api.js';
import { batchComparison } from './batch-compare.js';
import { batchRows } from './batch-rows.js';
import { follow } from './live.js';
import { navigate } from './router.js';
import { badge, busy, errorBox, formatTime, h } from './dom.js';
import { can, currentUser } from './session.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf, EventOf } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'batchResults'>['batch']} Batch */

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
  /** @type {Batch | undefined} the batch as last read (the rows' reads carry it) */
  let shown;
  const rows = batchRows(path, signal, (batch) => showBatch(batch));
  const progressCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'batch-progress-label', testid: 'batch-progress-card' },
    label,
    bar,
    failures,
    rows.chips,
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
  const resultsCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'batch-results-title' },
    h('h2', { id: 'batch-results-title' }, 'Results per project (failures first)'),
    rows.el,
  );

  let operator = false;
  /** @param {EventOf<'batchEvents', 'progress'>} p a batch's counts and state (a batch view has them too) */
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
    rows.showCounts(p);
    const running = p.state === 'running';
    // Cancel and Retry need the operator role (operator = false until the role is known).
    cancel.hidden = !running || !operator;
    retry.hidden = running || p.failed + cancelled === 0 || !operator;
  };
  /** @param {Batch} batch */
  function showBatch(batch) {
    shown = batch;
    showProgress(batch);
    meta.textContent = `Plugin ${batch.pluginId} · started ${formatTime(batch.createdAt)} by ${batch.createdBy ?? '—'}${
      batch.finishedAt ? ` · finished ${formatTime(batch.finishedAt)}` : ''
    }${batch.retryOf ? ` · retry of ${batch.retryOf}` : ''}`;
  }
  cancel.addEventListener('click', () =>
    busy(cancel, errors, async () => {
      showBatch(/** @type {AnswerOf<'cancelBatch'>} */ (await post(`${path}/cancel`)));
      await rows.load();
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
  try {
    [, operator] = await Promise.all([
      rows.load(0),
      currentUser(signal).then((user) => can(user, 'operator')),
    ]);
  } finally {
    loading.remove();
  }
  const first = /** @type {Batch} */ (shown);
  const comparison = batchComparison(first, signal);
  container.append(progressCard, comparison.el, resultsCard);
  showBatch(first);
  // Leaving the page aborts its reads: that is not an error to show (nor an unhandled rejection).
  void comparison.refresh().catch((error) => {
    if (!signal.aborted) errors.show(error);
  });
  if (first.state !== 'running') return;

  const followed = await follow({
    path,
    signal,
    everyMs: 1000,
    onEvent: (name, data) => {
      // the stream's data per event name: EventOf<'batchEvents', name>
      if (name === 'progress') showProgress(/** @type {EventOf<'batchEvents', 'progress'>} */ (data));
      if (name === 'outcomes') rows.refreshSoon();
      // The rows and the counts together, from one read (the event's own results may be 10,000).
      if (name === 'done') void rows.load().catch(() => {});
    },
    // No done event (stream failed or ended early): read until finished.
    read: async () => {
      const batch = await rows.load();
      return batch !== undefined && batch.state !== 'running';
    },
    onMode: (mode, error) => {
      progressCard.dataset.live = mode;
      if (error) streamNote.textContent = `Live stream unavailable (${error.message}); polling every second.`;
    },
  });
  if (followed)
    void comparison.refresh().catch((error) => {
      if (!signal.aborted) errors.show(error);
    });
}
