// @ts-check
// Operations: the run form (run-form.js), the live list filtered and paged,
// and one operation's page with cancel and run again.
import { get, post } from './api.js';
import { every, follow } from './live.js';
import { can, currentUser, needsRole } from './session.js';
import { runAgain, runForm } from './run-form.js';
import { badge, busy, errorBox, field, formatDuration, h, pretty, table, when } from './dom.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf, EventOf } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'getOperation'>} Operation */

/** @type {Set<string>} */
const ACTIVE = new Set(['queued', 'running']);
/** What the state filter offers (the api's OPERATION_FILTERS): outcome_unknown is its own outcome. */
const STATE_FILTERS = [
  'queued',
  'running',
  'succeeded',
  'partially_succeeded',
  'failed',
  'outcome_unknown',
  'cancelled',
];
const PAGE_SIZE = 50;

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context
 */
export async function operationsView(container, { signal }) {
  container.append(h('div', { class: 'page-head' }, h('h1', {}, 'Operations')));
  /** @type {[AnswerOf<'listPlugins'>, AnswerOf<'listProjects'>, import('./session.js').Me]} */
  const [plugins, projects, user] = await Promise.all([
    get('/plugins', signal),
    get('/projects', signal),
    currentUser(signal),
  ]);
  const listBody = h('div', { testid: 'operations-list' }, h('p', { class: 'muted' }, 'Loading…'));
  const listNote = h('p', { class: 'hint' }, 'Refreshes every 2 seconds.');

  /** @param {string} label @param {string} testid @param {[string, string][]} choices */
  const choice = (label, testid, choices) =>
    h(
      'select',
      { testid },
      h('option', { value: '' }, label),
      choices.map(([value, text]) => h('option', { value }, text)),
    );
  const byPlugin = choice(
    'Every plugin',
    'ops-filter-plugin',
    plugins.map((p) => [p.id, p.id]),
  );
  const byProject = choice(
    'Every project',
    'ops-filter-project',
    projects.map((p) => [p.id, p.id]),
  );
  const byState = choice(
    'Every state',
    'ops-filter-state',
    STATE_FILTERS.map((state) => [state, state.replaceAll('_', ' ')]),
  );
  const byRequester = h('input', {
    type: 'search',
    placeholder: 'token:ci or user:ana@host',
    testid: 'ops-filter-requested-by',
  });
  const newer = h('button', { type: 'button', testid: 'ops-newer', disabled: true }, '← Newer');
  const older = h('button', { type: 'button', testid: 'ops-older', disabled: true }, 'Older →');
  const pageLabel = h('span', { class: 'muted', testid: 'ops-page' }, 'Page 1');
  /** The cursor of each page shown so far: [undefined] is the newest page. */
  /** @type {(string | undefined)[]} */
  let cursors = [undefined];
  /** @type {string | undefined} */
  let nextCursor;

  const query = () => {
    const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (byPlugin.value) params.set('pluginId', byPlugin.value);
    if (byProject.value) params.set('projectId', byProject.value);
    if (byState.value) params.set('state', byState.value);
    if (byRequester.value.trim()) params.set('requestedBy', byRequester.value.trim());
    const cursor = cursors.at(-1);
    if (cursor) params.set('cursor', cursor);
    return params;
  };
  let reads = 0;
  const refresh = async () => {
    // A filter changed while the timer's read was on its way: only the newest read is shown.
    const mine = ++reads;
    /** @type {AnswerOf<'listOperations'>} */
    const page = await get(`/operations?${query()}`, signal);
    if (mine !== reads) return;
    nextCursor = page.nextCursor;
    older.disabled = !nextCursor;
    newer.disabled = cursors.length === 1;
    pageLabel.textContent = `Page ${cursors.length}`;
    listBody.replaceChildren(
      table(
        ['Operation', 'Action', 'Plugin', 'Project', 'State', 'Requested', 'By'],
        page.items.map((op) => [
          h('a', { href: `#/operations/${encodeURIComponent(op.id)}` }, h('code', { class: 'id' }, op.id)),
          h('code', {}, op.action),
          op.pluginId,
          op.projectId,
          badge(outcomeOf(op)),
          when(op.requestedAt),
          op.requestedBy ?? '—',
        ]),
        { class: 'data', testid: 'operations-table' },
      ),
    );
  };
  const reload = () =>
    void refresh().catch(
      (error) => (listNote.textContent = `Could not read: ${error.detail ?? error.message}`),
    );
  for (const control of [byPlugin, byProject, byState, byRequester]) {
    control.addEventListener('change', () => {
      cursors = [undefined];
      reload();
    });
  }
  older.addEventListener('click', () => {
    if (!nextCursor) return;
    cursors.push(nextCursor);
    reload();
  });
  newer.addEventListener('click', () => {
    if (cursors.length > 1) cursors.pop();
    reload();
  });

  container.append(
    // Starting work needs the operator role; a viewer gets a note instead of a form.
    can(user, 'operator')
      ? runForm(
          plugins.filter((p) => p.enabled),
          projects.filter((p) => p.trusted),
          signal,
        )
      : needsRole(user, 'operator', 'Running an operation', 'op-start-needs-role'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'ops-title' },
      h('h2', { id: 'ops-title' }, 'Operations'),
      h(
        'div',
        { class: 'row filters', testid: 'ops-filters' },
        field('Plugin', byPlugin),
        field('Project', byProject),
        field('State', byState),
        field('Requested by', byRequester),
      ),
      listNote,
      listBody,
      h('div', { class: 'actions pager' }, newer, pageLabel, older),
    ),
  );
  await every(
    2000,
    signal,
    async () => {
      await refresh();
      return false;
    },
    /** @param {{ detail?: string, message?: string }} error an ApiError or a network Error */
    (error) => {
      listNote.textContent = `Could not refresh: ${error.detail ?? error.message}. Retrying.`;
    },
  );
}

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context `params`: the operation id
 */
export async function operationView(container, { signal, params: [id] }) {
  const path = `/operations/${encodeURIComponent(/** @type {string} */ (id))}`;
  const errors = errorBox('op-cancel-error');
  const state = h('span', { testid: 'op-state' });
  const details = h('dl', { class: 'facts', testid: 'op-details' });
  const inputShown = h('div', { testid: 'op-input-shown' });
  const outcome = h('div', { testid: 'op-outcome' });
  const cancel = h(
    'button',
    { type: 'button', class: 'danger', testid: 'op-cancel', hidden: true },
    'Cancel operation',
  );
  const again = h('button', { type: 'button', testid: 'op-run-again', hidden: true }, 'Run again…');
  const note = h('p', { class: 'hint', role: 'status' });
  const logs = h('ol', { class: 'log', testid: 'op-logs' }, h('li', {}, 'No stderr yet.'));
  const card = h(
    'section',
    { class: 'card', testid: 'op-card' },
    details,
    h('div', { class: 'actions' }, cancel, again),
    errors.el,
    note,
  );
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Operation ', h('code', { class: 'id' }, id)), state),
    h('p', {}, h('a', { href: '#/operations' }, '← All operations')),
    card,
    h(
      'div',
      { class: 'grid-2 side-by-side' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'op-input-title' },
        h('h2', { id: 'op-input-title' }, 'Input (redacted)'),
        inputShown,
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'op-outcome-title' },
        h('h2', { id: 'op-outcome-title' }, 'Outcome'),
        outcome,
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'op-logs-title' },
      h('h2', { id: 'op-logs-title' }, 'Plugin stderr (redacted)'),
      logs,
    ),
  );

  /** @param {Operation} op */
  const show = (op) => {
    state.replaceChildren(badge(outcomeOf(op)));
    state.dataset.state = op.state;
    /** @type {[string, string | Node, string][]} */
    const rows = [
      ['Action', h('code', {}, op.action), 'action'],
      ['Plugin', op.pluginId, 'plugin'],
      ['Project', op.projectId, 'project'],
      ['Requested', when(op.requestedAt), 'requested'],
      ['Requested by', op.requestedBy ?? '—', 'requested-by'],
      ['Started', when(op.startedAt), 'started'],
      ['Worker', op.worker ?? '—', 'worker'],
      ['Finished', when(op.finishedAt), 'finished'],
      ['Duration', op.durationMs !== undefined ? formatDuration(op.durationMs) : '—', 'duration'],
    ];
    if (op.cancelledBy) rows.push(['Cancelled by', op.cancelledBy, 'cancelled-by']);
    if (op.timeoutMs) rows.push(['Time limit', `${formatDuration(op.timeoutMs)} (asked for)`, 'timeout']);
    details.replaceChildren(
      ...rows.flatMap(([term, value, testid]) => [
        h('dt', {}, term),
        h('dd', { testid: `op-${testid}` }, value),
      ]),
    );
    cancel.hidden = !ACTIVE.has(op.state) || !operator;
    again.hidden = !operator;
    inputShown.replaceChildren(
      op.input === undefined
        ? h('p', { class: 'muted' }, 'Not shown by this server.')
        : h('pre', { class: 'json' }, pretty(op.input)),
    );
    /** @type {HTMLElement[]} */
    const parts = [];
    if (op.errorCode || op.errorMessage) {
      parts.push(
        h(
          'div',
          { class: 'alert alert-bad', testid: 'op-error' },
          h('strong', {}, op.errorCode ?? 'Error'),
          ' ',
          op.errorMessage ?? '',
        ),
      );
    }
    if (op.result !== undefined)
      parts.push(h('pre', { class: 'json', testid: 'op-result' }, pretty(op.result)));
    if (parts.length === 0)
      parts.push(h('p', { class: 'muted' }, ACTIVE.has(op.state) ? 'Not finished yet.' : 'No result.'));
    outcome.replaceChildren(...parts);
  };

  cancel.addEventListener('click', () =>
    busy(cancel, errors, async () => {
      show(/** @type {AnswerOf<'cancelOperation'>} */ (await post(`${path}/cancel`)));
    }),
  );
  again.addEventListener('click', () => runAgain(op));

  // Cancel and run again need the operator role.
  /** @type {[Operation, import('./session.js').Me]} */
  const [first, user] = await Promise.all([get(path, signal), currentUser(signal)]);
  const operator = can(user, 'operator');
  let op = first;
  show(op);
  const logsFollowed = followLogs(`${path}/logs`, logs, () => !ACTIVE.has(op.state), signal);
  if (!ACTIVE.has(op.state)) return logsFollowed;
  await follow({
    path,
    signal,
    everyMs: 2000,
    onEvent: (name, data) => {
      if ((name === 'state' || name === 'done') && data && typeof data === 'object' && data.state) {
        op = /** @type {EventOf<'operationEvents', 'state' | 'done'>} */ (data);
        show(op);
      }
    },
    read: async () => {
      op = await get(path, signal);
      show(op);
      return !ACTIVE.has(op.state);
    },
    over: () => !ACTIVE.has(op.state),
    onMode: (mode, error) => {
      card.dataset.live = mode;
      if (error) note.textContent = `Live stream unavailable (${error.message}); polling every 2 seconds.`;
    },
  });
}

/**
 * The operation's stderr, read every second while it runs and once more after
 * it ended; each line's time in local time (the exact time on hover).
 * @param {string} path
 * @param {HTMLElement} target
 * @param {() => boolean} ended
 * @param {AbortSignal} signal
 */
async function followLogs(path, target, ended, signal) {
  await every(1000, signal, async () => {
    const done = ended();
    try {
      /** @type {AnswerOf<'operationLogs'>} */
      const entries = await get(path, signal);
      if (entries.length > 0) {
        target.replaceChildren(
          ...entries.map((entry) =>
            h(
              'li',
              {},
              h('span', { class: 'log-meta' }, when(entry.at), ` ${entry.source.padEnd(6)} `),
              entry.line,
            ),
          ),
        );
        target.dataset.lines = String(entries.length);
      }
    } catch (error) {
      if (signal.aborted || /** @type {{ signedOut?: boolean }} */ (error)?.signedOut) return true;
    }
    return done;
  });
}

/**
 * The state a person reads: `outcome_unknown` for a failed operation whose plugin may have acted.
 * @param {{ state: string, outcomeUnknown?: true }} op
 */
function outcomeOf(op) {
  return op.outcomeUnknown ? 'outcome_unknown' : op.state;
}
