// @ts-check
// The form that runs an operation: the actions the plugin advertised for the
// project (its latest inspection), each with its risk; an action that may
// change the project is confirmed in a dialog naming it and the project
// before anything is queued (the CLI's --yes). "Run again" on an operation's
// page opens it pre-filled.
import { get, post } from './api.js';
import { navigate } from './router.js';
import { busy, errorBox, field, h, isolatedText, nextId, pretty, when } from './dom.js';

/** @import { AnswerOf, BodyIn, routes } from '../../core/contract/index.js' */
/** @typedef {BodyIn<typeof routes.createOperation>} NewOperation */
/** @typedef {AnswerOf<'projectActions'>['actions'][number]} Action */
/** @typedef {{ pluginId: string, projectId: string, action: string, input?: unknown }} Prefill */

/** The one risk a plugin can give an action that changes nothing; any other may change the project. */
const HARMLESS_RISK = 'none';

/** @param {string} risk */
export function isMutating(risk) {
  return risk.trim().toLowerCase() !== HARMLESS_RISK;
}

/** @type {Prefill | undefined} */
let pending;

/**
 * Opens the operations page with the run form filled in as `operation` was requested.
 * @param {Prefill} operation
 */
export function runAgain(operation) {
  pending = {
    pluginId: operation.pluginId,
    projectId: operation.projectId,
    action: operation.action,
    input: operation.input,
  };
  navigate('#/operations');
}

function idempotencyKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * @param {AnswerOf<'listPlugins'>} plugins the enabled ones
 * @param {AnswerOf<'listProjects'>} projects the trusted ones
 * @param {AbortSignal} signal
 */
export function runForm(plugins, projects, signal) {
  const prefill = pending;
  pending = undefined;
  const errors = errorBox('op-start-error');
  const plugin = h(
    'select',
    { required: true, testid: 'op-plugin' },
    plugins.map((p) => h('option', { value: p.id }, `${isolatedText(p.name)} (${p.id})`)),
  );
  /** @param {AnswerOf<'listProjects'>[number]} p */
  const projectOption = (p) => h('option', { value: p.id }, `${isolatedText(p.displayName)} (${p.id})`);
  const project = h('select', { required: true, testid: 'op-project' }, projects.map(projectOption));
  // Hundreds of projects in one drop-down cannot be scanned: typing narrows it (id or name).
  const projectSearch = h('input', {
    id: nextId('f'),
    type: 'search',
    placeholder: 'Type to narrow the list',
    'aria-label': 'Search projects by id or name',
    testid: 'op-project-search',
  });
  const projectCount = h('p', { class: 'hint', role: 'status', testid: 'op-project-count' });
  const narrowProjects = () => {
    const needle = projectSearch.value.trim().toLowerCase();
    const matching = needle
      ? projects.filter(
          (p) => p.id.toLowerCase().includes(needle) || p.displayName.toLowerCase().includes(needle),
        )
      : projects;
    const before = project.value;
    project.replaceChildren(...matching.map(projectOption));
    projectCount.textContent = needle ? `${matching.length} of ${projects.length} projects match.` : '';
    if (project.value !== before) {
      key = idempotencyKey();
      void loadActions();
    }
  };
  projectSearch.addEventListener('input', narrowProjects);
  const action = h('select', { required: true, testid: 'op-action' });
  const actionNote = h('p', { class: 'hint', testid: 'op-action-note', 'aria-live': 'polite' });
  const input = h('textarea', {
    class: 'mono',
    rows: '4',
    spellcheck: 'false',
    placeholder: '{"message": "hello"}',
    testid: 'op-input',
  });
  const inputError = h('p', { class: 'field-error', role: 'alert', testid: 'op-input-error', hidden: true });
  const button = h('button', { type: 'submit', class: 'primary', testid: 'op-start' }, 'Run operation');
  const confirm = confirmDialog();
  if (prefill) {
    plugin.value = prefill.pluginId;
    project.value = prefill.projectId;
    if (prefill.input !== undefined && !isEmptyObject(prefill.input)) input.value = pretty(prefill.input);
  }
  /** @type {Map<string, Action>} */
  let offered = new Map();
  let key = idempotencyKey();
  let loads = 0;

  const describeAction = () => {
    const chosen = offered.get(action.value);
    if (!chosen) return;
    const description = chosen.description.trim();
    const sentence = !description || /[.!?]$/.test(description) ? description : `${description}.`;
    const consequence = isMutating(chosen.risk) ? ' — you confirm before it runs.' : '.';
    actionNote.textContent = `${sentence} Risk: ${chosen.risk}${consequence}`.trim();
  };

  /** @param {string} [wanted] the action to select when offered */
  const loadActions = async (wanted) => {
    const mine = ++loads;
    action.replaceChildren();
    action.disabled = true;
    offered = new Map();
    actionNote.textContent = '';
    if (!plugin.value || !project.value) return;
    actionNote.textContent = 'Reading the actions the plugin advertised…';
    /** @type {AnswerOf<'projectActions'>} */
    let answer;
    try {
      answer = await get(
        `/projects/${encodeURIComponent(project.value)}/actions?plugin=${encodeURIComponent(plugin.value)}`,
        signal,
      );
    } catch (error) {
      if (mine === loads) errors.show(error);
      return;
    }
    if (mine !== loads) return;
    offered = new Map(answer.actions.map((a) => [a.id, a]));
    const options = answer.actions.map((a) =>
      h('option', { value: a.id }, `${isolatedText(a.name)} (${isolatedText(a.id)}) — risk: ${a.risk}`),
    );
    // An operation run again whose action the latest inspection no longer advertises: still offered, as unknown risk.
    if (wanted && !offered.has(wanted)) {
      offered.set(wanted, {
        id: wanted,
        name: wanted,
        description: 'Not advertised by the latest inspection of this project.',
        risk: 'unknown',
      });
      options.unshift(h('option', { value: wanted }, `${wanted} — not advertised now, risk unknown`));
    }
    action.replaceChildren(...options);
    action.disabled = options.length === 0;
    if (wanted) action.value = wanted;
    if (options.length === 0) {
      actionNote.textContent = answer.inspectedAt
        ? `The latest inspection of ${project.value} by ${plugin.value} advertised no action (or it failed): inspect it again to list them.`
        : `${plugin.value} has not inspected ${project.value} yet: run a batch first; its actions are listed here then.`;
    } else {
      actionNote.replaceChildren();
      describeAction();
      if (answer.inspectedAt)
        actionNote.append(' As advertised by the inspection of ', when(answer.inspectedAt), '.');
    }
  };
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
  for (const control of [plugin, project]) {
    control.addEventListener('change', () => {
      key = idempotencyKey();
      void loadActions();
    });
  }
  action.addEventListener('change', () => {
    key = idempotencyKey();
    describeAction();
  });
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'op-start-title', testid: 'op-form' },
    h('h2', { id: 'op-start-title' }, 'Run an operation'),
    plugins.length === 0 ? h('p', { class: 'notice' }, 'No plugin is enabled.') : null,
    projects.length === 0 ? h('p', { class: 'notice' }, 'No project is trusted.') : null,
    h(
      'div',
      { class: 'row' },
      field('Plugin', plugin),
      h(
        'div',
        { class: 'field' },
        field('Project (trusted only)', project),
        // A real <label>: every control of the UI has one (screen readers, the review test).
        h('label', { class: 'visually-hidden', for: projectSearch.id }, 'Search projects by id or name'),
        projectSearch,
        projectCount,
      ),
      field('Action (as the plugin advertised it)', action),
    ),
    actionNote,
    field('Input (JSON, optional)', input, 'Checked before sending. Leave empty for no input.'),
    inputError,
    h('div', { class: 'actions' }, button),
    errors.el,
    confirm.el,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const parsed = check();
    if (!parsed.ok) {
      input.focus();
      return;
    }
    const chosen = offered.get(action.value);
    if (!chosen) {
      errors.show(new Error('Choose one of the actions the plugin advertised.'));
      return;
    }
    /** @type {NewOperation} */
    const body = { pluginId: plugin.value, projectId: project.value, action: chosen.id };
    // any JSON as typed: the api answers 400 when it is not an object
    if (parsed.value !== undefined) body.input = /** @type {NewOperation['input']} */ (parsed.value);
    const send = () =>
      busy(button, errors, async () => {
        /** @type {AnswerOf<'createOperation'>} */
        const op = await post('/operations', body, { 'Idempotency-Key': key });
        navigate(`#/operations/${encodeURIComponent(op.id)}`);
      });
    if (!isMutating(chosen.risk)) return void send();
    confirm.ask(chosen, body.projectId, body.pluginId, () => void send());
  });
  void loadActions(prefill?.action);
  return form;
}

/** The dialog that names what is about to run, and where, before it is queued. */
function confirmDialog() {
  const text = h('p', { testid: 'op-confirm-text' });
  const run = h('button', { type: 'button', class: 'danger', testid: 'op-confirm-run' }, 'Run it');
  const back = h('button', { type: 'button', testid: 'op-confirm-cancel' }, 'Cancel');
  const el = h(
    'dialog',
    { class: 'confirm', testid: 'op-confirm', 'aria-labelledby': 'op-confirm-title' },
    h('h2', { id: 'op-confirm-title' }, 'Run this action?'),
    text,
    h('div', { class: 'actions' }, back, run),
  );
  /** @type {(() => void) | undefined} */
  let onRun;
  run.addEventListener('click', () => {
    el.close();
    const go = onRun;
    onRun = undefined;
    go?.();
  });
  back.addEventListener('click', () => {
    onRun = undefined;
    el.close();
  });
  el.addEventListener('close', () => (onRun = undefined));
  return {
    el,
    /**
     * @param {Action} action
     * @param {string} projectId
     * @param {string} pluginId
     * @param {() => void} then
     */
    ask(action, projectId, pluginId, then) {
      text.replaceChildren(
        'Run ',
        h('strong', {}, action.name),
        ' (',
        h('code', {}, action.id),
        ') of ',
        h('code', {}, pluginId),
        ' on project ',
        h('strong', {}, projectId),
        `? The plugin gives it the risk "${action.risk}": it may change the project.`,
      );
      // Set after showModal: a close event from an earlier dialog would clear it.
      el.showModal();
      onRun = then;
      back.focus();
    },
  };
}

/** @param {unknown} value */
function isEmptyObject(value) {
  return (
    value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0
  );
}
