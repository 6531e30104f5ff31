// @ts-check
// The form that creates a rollout (POST /api/v1/rollouts, the CLI's `rollout
// create`): a plugin enabled to operate, one of the actions its inspections
// advertised (with their risk), the selection (every selector given must
// match: all, labels, facts filters, advertised, project ids), the input and
// the plan. The hash's query fills it in: the Fleet page's "Act on these"
// opens it as `#/rollouts/new?plugin=P&where=F&label=L`. It asks before it
// creates, shows the api's validation errors, then goes to the rollout's page.
import { get, post } from './api.js';
import { confirmDialog } from './confirm.js';
import { busy, errorBox, field, h, isolatedText, nextId } from './dom.js';
import { navigate } from './router.js';
import { can, currentUser, needsRole } from './session.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf, BodyIn, routes } from '../../core/contract/index.js' */
/** @typedef {BodyIn<typeof routes.createRollout>} NewRollout */
/** @typedef {AnswerOf<'projectActions'>['actions'][number]} Action */

/** How many of the plugin's projects are asked which actions they advertise (there is no fleet-wide list). */
const SAMPLED_PROJECTS = 10;
/** The <option> that lets one type an action no sampled project advertised. */
const OTHER_ACTION = '';

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context `query`: plugin, where (repeatable), label (repeatable), advertised, project (repeatable)
 */
export async function newRolloutView(container, { signal, query }) {
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'New rollout')),
    h('p', {}, h('a', { href: '#/rollouts' }, '← All rollouts')),
  );
  /** @type {[AnswerOf<'listPlugins'>, import('./session.js').Me]} */
  const [plugins, user] = await Promise.all([get('/plugins', signal), currentUser(signal)]);
  if (!can(user, 'operator')) {
    container.append(needsRole(user, 'operator', 'Creating a rollout', 'rollout-create-needs-role'));
    return;
  }
  // The api refuses (409) a plugin not enabled with the project.operate scope.
  const operating = plugins.filter((p) => p.enabled && p.grantedScopes.includes('project.operate'));
  const wanted = query.get('plugin') ?? '';
  const errors = errorBox('rollout-form-error');
  const plugin = h(
    'select',
    { required: true, testid: 'rollout-plugin' },
    operating.map((p) => h('option', { value: p.id }, `${isolatedText(p.name)} (${isolatedText(p.id)})`)),
  );
  if (operating.some((p) => p.id === wanted)) plugin.value = wanted;
  const pluginNote =
    wanted && !operating.some((p) => p.id === wanted)
      ? h(
          'p',
          { class: 'notice', role: 'note', testid: 'rollout-plugin-note' },
          `Plugin ${wanted} is not enabled with the project.operate scope: enable it on its review page to act with it.`,
        )
      : null;

  const action = h('select', { testid: 'rollout-action' });
  const otherAction = h('input', {
    type: 'text',
    spellcheck: 'false',
    autocomplete: 'off',
    testid: 'rollout-action-other',
  });
  const otherField = field(
    'Action id',
    otherAction,
    'An action of the plugin no sampled project advertised.',
  );
  otherField.hidden = true;
  const actionNote = h('p', { class: 'hint', testid: 'rollout-action-note', 'aria-live': 'polite' });

  const all = checkbox('rollout-all', 'All trusted projects');
  const labels = h('input', {
    type: 'text',
    spellcheck: 'false',
    autocomplete: 'off',
    testid: 'rollout-labels',
    value: query.getAll('label').join(', '),
  });
  const where = h('textarea', {
    class: 'mono',
    rows: '2',
    spellcheck: 'false',
    placeholder: 'go.version<1.21',
    testid: 'rollout-where',
    value: query.getAll('where').join('\n'),
  });
  const advertised = checkbox(
    'rollout-advertised',
    'Only projects whose latest inspection advertised this action',
    query.get('advertised') === '1',
  );
  const projectIds = h('textarea', {
    class: 'mono',
    rows: '2',
    spellcheck: 'false',
    testid: 'rollout-projects',
    value: query.getAll('project').join('\n'),
  });
  const input = h('textarea', {
    class: 'mono',
    rows: '3',
    spellcheck: 'false',
    placeholder: '{"version": "1.22"}',
    testid: 'rollout-input',
  });
  const inputError = h('p', {
    class: 'field-error',
    role: 'alert',
    testid: 'rollout-input-error',
    hidden: true,
  });
  const name = h('input', { type: 'text', maxlength: '100', autocomplete: 'off', testid: 'rollout-name' });
  const waves = h('input', {
    type: 'text',
    spellcheck: 'false',
    autocomplete: 'off',
    placeholder: '1,10%,100%',
    testid: 'rollout-waves',
  });
  const concurrency = h('input', {
    type: 'number',
    min: '1',
    max: '100',
    step: '1',
    placeholder: '4',
    testid: 'rollout-concurrency',
  });
  const maxFailures = h('input', {
    type: 'text',
    spellcheck: 'false',
    autocomplete: 'off',
    placeholder: '10%',
    testid: 'rollout-max-failures',
  });
  const pauseBetween = checkbox('rollout-pause-between', 'Pause after each wave until someone resumes it');
  const previewAction = h('input', {
    type: 'text',
    spellcheck: 'false',
    autocomplete: 'off',
    placeholder: 'e.g. a dry-run action',
    testid: 'rollout-preview-action',
  });
  const button = h(
    'button',
    { type: 'submit', class: 'primary', testid: 'rollout-create', disabled: operating.length === 0 },
    'Create rollout…',
  );
  const confirm = confirmDialog('rollout-create-confirm');

  /** @type {Map<string, Action>} the actions the sampled projects advertised, by id */
  let offered = new Map();
  /** Risks seen per action id across the sample (one project may differ from another). */
  /** @type {Map<string, Set<string>>} */
  let risks = new Map();
  let loads = 0;

  const riskOf = (/** @type {string} */ id) => {
    const seen = [...(risks.get(id) ?? [])];
    return seen.length === 0 ? 'unknown' : seen.join(' or ');
  };
  const describeAction = () => {
    const other = action.value === OTHER_ACTION;
    otherField.hidden = !other;
    const chosen = offered.get(action.value);
    if (other || !chosen) {
      actionNote.textContent =
        'Its risk is read from the selected projects’ inspections when the rollout is created; one not advertised waits for an admin’s approval.';
      return;
    }
    const risk = riskOf(chosen.id);
    const description = chosen.description.trim();
    const sentence = !description || /[.!?]$/.test(description) ? description : `${description}.`;
    actionNote.textContent = `${sentence} Risk: ${risk}${
      risk === 'none' ? ' — it starts at once.' : ' — it waits for the approval of an admin other than you.'
    }`.trim();
  };

  /** Which actions the plugin's projects advertise: asked of a few of them (the selection's, when it filters). */
  const loadActions = async () => {
    const mine = ++loads;
    action.replaceChildren();
    offered = new Map();
    risks = new Map();
    if (!plugin.value) return;
    actionNote.textContent = 'Reading the actions the plugin advertised…';
    const base = `/plugins/${encodeURIComponent(plugin.value)}/facts`;
    const filters = new URLSearchParams({ limit: String(SAMPLED_PROJECTS) });
    for (const filter of lines(where.value)) filters.append('where', filter);
    for (const label of list(labels.value)) filters.append('label', label);
    /** @type {string[]} */
    let sample;
    try {
      /** @type {AnswerOf<'pluginFacts'>} */
      const fleet = await get(`${base}?${filters}`, signal).catch(() =>
        // A filter the api refuses is said when the rollout is created; the sample is of the whole fleet.
        get(`${base}?limit=${SAMPLED_PROJECTS}`, signal),
      );
      sample = fleet.items.map((row) => row.projectId);
    } catch (error) {
      if (mine === loads) errors.show(error);
      return;
    }
    const answers = await Promise.all(
      sample.map((projectId) =>
        get(
          `/projects/${encodeURIComponent(projectId)}/actions?plugin=${encodeURIComponent(plugin.value)}`,
          signal,
        ).catch(() => undefined),
      ),
    );
    if (mine !== loads) return;
    for (const answer of /** @type {(AnswerOf<'projectActions'> | undefined)[]} */ (answers))
      for (const advertisedAction of answer?.actions ?? []) {
        if (!offered.has(advertisedAction.id)) offered.set(advertisedAction.id, advertisedAction);
        risks.set(
          advertisedAction.id,
          (risks.get(advertisedAction.id) ?? new Set()).add(advertisedAction.risk),
        );
      }
    action.replaceChildren(
      ...[...offered.values()].map((a) =>
        h(
          'option',
          { value: a.id },
          `${isolatedText(a.name)} (${isolatedText(a.id)}) — risk: ${riskOf(a.id)}`,
        ),
      ),
      h('option', { value: OTHER_ACTION }, 'Another action (type its id)'),
    );
    const asked = query.get('action');
    if (asked && offered.has(asked)) action.value = asked;
    else if (asked) {
      action.value = OTHER_ACTION;
      otherAction.value = asked;
    }
    describeAction();
    if (offered.size === 0)
      actionNote.textContent =
        sample.length === 0
          ? `${plugin.value} has no successful inspection yet: run a batch first, its actions are listed here then.`
          : `None of ${sample.length} of its projects advertised an action: type the action's id.`;
  };
  plugin.addEventListener('change', () => void loadActions());
  action.addEventListener('change', describeAction);

  /** @returns {{ ok: true, value: NewRollout['input'] } | { ok: false }} */
  const parseInput = () => {
    const text = input.value.trim();
    let message = '';
    /** @type {unknown} */
    let value;
    if (text) {
      try {
        value = JSON.parse(text);
        if (value === null || typeof value !== 'object' || Array.isArray(value))
          message = 'Input must be a JSON object, {…}.';
      } catch (error) {
        message = `Input is not valid JSON: ${/** @type {SyntaxError} */ (error).message}`;
      }
    }
    inputError.hidden = !message;
    inputError.textContent = message;
    input.setAttribute('aria-invalid', message ? 'true' : 'false');
    return message ? { ok: false } : { ok: true, value: /** @type {NewRollout['input']} */ (value) };
  };
  input.addEventListener('input', () => void parseInput());

  /** The request as the form says it; only what was given (the api's defaults for the rest). */
  const body = () => {
    const parsed = parseInput();
    if (!parsed.ok) return undefined;
    /** @type {NewRollout} */
    const request = {
      pluginId: plugin.value,
      action: action.value === OTHER_ACTION ? otherAction.value.trim() : action.value,
    };
    if (parsed.value !== undefined) request.input = parsed.value;
    if (name.value.trim()) request.name = name.value.trim();
    if (all.input.checked) request.all = true;
    if (list(labels.value).length) request.labels = list(labels.value);
    if (lines(where.value).length) request.where = lines(where.value);
    if (advertised.input.checked) request.advertised = true;
    const ids = projectIds.value.split(/[\s,]+/).filter(Boolean);
    if (ids.length) request.projects = ids;
    if (waves.value.trim()) request.waves = waves.value.trim();
    if (concurrency.value.trim()) request.concurrency = Number(concurrency.value);
    if (maxFailures.value.trim()) request.maxFailures = maxFailures.value.trim();
    if (pauseBetween.input.checked) request.pauseBetween = true;
    if (previewAction.value.trim()) request.previewAction = previewAction.value.trim();
    return request;
  };

  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'rollout-form-title', testid: 'rollout-form', novalidate: true },
    h('h2', { id: 'rollout-form-title' }, 'What to run'),
    operating.length === 0
      ? h('p', { class: 'notice' }, 'No plugin is enabled with the project.operate scope.')
      : null,
    pluginNote,
    h(
      'div',
      { class: 'row' },
      field('Plugin (enabled to operate)', plugin),
      field('Action (as its inspections advertised it)', action),
    ),
    otherField,
    actionNote,
    field(
      'Input (JSON object, optional)',
      input,
      'The same input for every project. Checked before sending.',
    ),
    inputError,
    h(
      'fieldset',
      { testid: 'rollout-selection' },
      h('legend', {}, 'Projects: every selector given must match'),
      all.el,
      field('Labels (comma-separated; a project needs every one)', labels),
      field(
        'Facts filters (one per line)',
        where,
        'As on the Fleet page, over the plugin’s latest results: NAME=VALUE, !=, ~REGEX, <, <=, >, >= (versions compare as versions).',
      ),
      advertised.el,
      field('Project ids (one per line or space-separated)', projectIds),
      h(
        'p',
        { class: 'hint' },
        'Untrusted projects and projects whose root is gone are not run: the rollout lists them as skipped, with the reason.',
      ),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Plan'),
      h(
        'div',
        { class: 'row' },
        field('Name (optional)', name),
        field('Waves', waves, 'Cumulative counts or shares of the selection; empty: 1,10%,100%.'),
        field('Concurrency per wave', concurrency, 'Operations at once; empty: 4.'),
        field(
          'Failures allowed',
          maxFailures,
          'N or P%; once more fail, it pauses. Empty: 10% (0 on a small selection).',
        ),
        field(
          'Preview action (optional)',
          previewAction,
          'An action of risk none run first on every project; then it waits for approval.',
        ),
      ),
      pauseBetween.el,
    ),
    h('div', { class: 'actions' }, button),
    errors.el,
    confirm.el,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    errors.clear();
    const request = body();
    if (!request) {
      input.focus();
      return;
    }
    if (!request.action) {
      errors.show(new Error('Choose an action, or type the id of another.'));
      return;
    }
    const risk = riskOf(request.action);
    confirm.ask(
      {
        title: 'Create this rollout?',
        body: [
          h(
            'p',
            {},
            'Run ',
            h('code', {}, request.action),
            ' of ',
            h('code', {}, request.pluginId),
            ` (risk as advertised: ${risk}) on every project the selection names, wave by wave.`,
          ),
          risk === 'none'
            ? 'An action of risk none starts at once.'
            : 'It waits for the approval of an admin other than you before anything runs.',
        ],
        confirm: 'Create rollout',
      },
      () =>
        void busy(button, errors, async () => {
          /** @type {AnswerOf<'createRollout'>} */
          const rollout = await post('/rollouts', request);
          navigate(`#/rollouts/${encodeURIComponent(rollout.id)}`);
        }),
    );
  });
  container.append(form);
  await loadActions();
}

/**
 * A checkbox with its label beside it.
 * @param {string} testid
 * @param {string} text
 * @param {boolean} [checked]
 */
function checkbox(testid, text, checked = false) {
  const id = nextId(testid);
  const input = h('input', { type: 'checkbox', id, testid, checked });
  return { input, el: h('div', { class: 'check' }, input, h('label', { for: id }, text)) };
}

/** @param {string} text one entry per line, blank lines dropped */
function lines(text) {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

/** @param {string} text comma-separated */
function list(text) {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
