// @ts-check
// Operations: live list, start form, detail with cancel.
import { get, post } from './api.js';
import { every, follow } from './live.js';
import { navigate } from './router.js';
import { can, currentUser, needsRole } from './session.js';
import { badge, busy, errorBox, field, formatTime, h, pretty, table } from './dom.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf, BodyIn, EventOf, routes } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'getOperation'>} Operation */
/** @typedef {BodyIn<typeof routes.createOperation>} NewOperation */

/** @type {Set<string>} */
const ACTIVE = new Set(['queued', 'running']);

function idempotencyKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

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
  container.append(
    // Starting work needs the operator role; a viewer gets a note instead of a form.
    can(user, 'operator')
      ? startForm(
          plugins.filter((p) => p.enabled),
          projects.filter((p) => p.trusted),
        )
      : needsRole(user, 'operator', 'Running an operation', 'op-start-needs-role'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'ops-title' },
      h('h2', { id: 'ops-title' }, 'Recent operations'),
      listNote,
      listBody,
    ),
  );
  await every(
    2000,
    signal,
    async () => {
      /** @type {AnswerOf<'listOperations'>} */
      const { items: operations } = await get('/operations?limit=50', signal);
      listBody.replaceChildren(
        table(
          ['Operation', 'Action', 'Plugin', 'Project', 'State', 'Requested'],
          operations.map((op) => [
            h('a', { href: `#/operations/${encodeURIComponent(op.id)}` }, h('code', {}, op.id)),
            h('code', {}, op.action),
            op.pluginId,
            op.projectId,
            badge(outcomeOf(op)),
            formatTime(op.requestedAt),
          ]),
          { class: 'data', testid: 'operations-table' },
        ),
      );
      return false;
    },
    /** @param {{ detail?: string, message?: string }} error an ApiError or a network Error */
    (error) => {
      listNote.textContent = `Could not refresh: ${error.detail ?? error.message}. Retrying.`;
    },
  );
}

/**
 * @param {AnswerOf<'listPlugins'>} plugins the enabled ones
 * @param {AnswerOf<'listProjects'>} projects the trusted ones
 */
function startForm(plugins, projects) {
  const errors = errorBox('op-start-error');
  const plugin = h(
    'select',
    { required: true, testid: 'op-plugin' },
    plugins.map((p) => h('option', { value: p.id }, `${p.name} (${p.id})`)),
  );
  const project = h(
    'select',
    { required: true, testid: 'op-project' },
    projects.map((p) => h('option', { value: p.id }, `${p.displayName} (${p.id})`)),
  );
  const action = h('input', {
    type: 'text',
    class: 'mono',
    required: true,
    placeholder: 'fixture.echo',
    testid: 'op-action',
  });
  const input = h('textarea', {
    class: 'mono',
    rows: '4',
    spellcheck: 'false',
    placeholder: '{"message": "hello"}',
    testid: 'op-input',
  });
  const inputError = h('p', { class: 'field-error', role: 'alert', testid: 'op-input-error', hidden: true });
  const button = h('button', { type: 'submit', class: 'primary', testid: 'op-start' }, 'Run operation');
  let key = idempotencyKey();
  /** @type {() => { ok: true, value: unknown } | { ok: false, message: string }} */
  const parseInput = () => {
    const text = input.value.trim();
    if (!text) return { ok: true, value: undefined };
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch (error) {
      return { ok: false, message: `Input is not valid JSON: ${/** @type {SyntaxError} */ (error).message}` };
    }
  };
  const check = () => {
    const parsed = parseInput();
    inputError.hidden = parsed.ok;
    inputError.textContent = parsed.ok ? '' : parsed.message;
    input.setAttribute('aria-invalid', parsed.ok ? 'false' : 'true');
    return parsed;
  };
  input.addEventListener('input', () => {
    key = idempotencyKey();
    check();
  });
  for (const control of [plugin, project, action])
    control.addEventListener('change', () => (key = idempotencyKey()));
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'op-start-title' },
    h('h2', { id: 'op-start-title' }, 'Run an operation'),
    plugins.length === 0 ? h('p', { class: 'notice' }, 'No plugin is enabled.') : null,
    projects.length === 0 ? h('p', { class: 'notice' }, 'No project is trusted.') : null,
    h(
      'div',
      { class: 'row' },
      field('Plugin', plugin),
      field('Project (trusted only)', project),
      field('Action', action),
    ),
    field('Input (JSON, optional)', input, 'Checked before sending. Leave empty for no input.'),
    inputError,
    h('div', { class: 'actions' }, button),
    errors.el,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const parsed = check();
    if (!parsed.ok) {
      input.focus();
      return;
    }
    /** @type {NewOperation} */
    const body = { pluginId: plugin.value, projectId: project.value, action: action.value.trim() };
    // any JSON as typed: the api answers 400 when it is not an object
    if (parsed.value !== undefined) body.input = /** @type {NewOperation['input']} */ (parsed.value);
    void busy(button, errors, async () => {
      /** @type {AnswerOf<'createOperation'>} */
      const op = await post('/operations', body, { 'Idempotency-Key': key });
      navigate(`#/operations/${encodeURIComponent(op.id)}`);
    });
  });
  return form;
}

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context `params`: the operation id
 */
export async function operationView(container, { signal, params: [id] }) {
  const path = `/operations/${encodeURIComponent(/** @type {string} */ (id))}`;
  const errors = errorBox('op-cancel-error');
  const state = h('span', { testid: 'op-state' });
  const details = h('dl', { class: 'facts' });
  const outcome = h('div', { testid: 'op-outcome' });
  const cancel = h(
    'button',
    { type: 'button', class: 'danger', testid: 'op-cancel', hidden: true },
    'Cancel operation',
  );
  const note = h('p', { class: 'hint', role: 'status' });
  const logs = h('pre', { class: 'log', testid: 'op-logs' }, 'No stderr yet.');
  const card = h(
    'section',
    { class: 'card', testid: 'op-card' },
    details,
    h('div', { class: 'actions' }, cancel),
    errors.el,
    note,
  );
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Operation ', h('code', {}, id)), state),
    h('p', {}, h('a', { href: '#/operations' }, '← All operations')),
    card,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'op-outcome-title' },
      h('h2', { id: 'op-outcome-title' }, 'Outcome'),
      outcome,
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
    /** @type {[string, string | Node][]} */
    const rows = [
      ['Action', h('code', {}, op.action)],
      ['Plugin', op.pluginId],
      ['Project', op.projectId],
      ['Requested', formatTime(op.requestedAt)],
      ['Started', formatTime(op.startedAt)],
      ['Finished', formatTime(op.finishedAt)],
    ];
    details.replaceChildren(...rows.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
    cancel.hidden = !ACTIVE.has(op.state) || !operator;
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

  // Cancel needs the operator role.
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
 * The operation's stderr, read every second while it runs and once more after it ended.
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
        target.textContent = entries
          .map((entry) => `${entry.at}  ${entry.source.padEnd(6)}  ${entry.line}`)
          .join('\n');
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
