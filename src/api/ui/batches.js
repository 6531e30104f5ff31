// @ts-check
// Batches: start one (a project picker that works with thousands), list them
// filtered and paged; one batch's page is batch-page.js.
import { get, post } from './api.js';
import { navigate } from './router.js';
import { can, currentUser, needsRole, prioritySelect } from './session.js';
import { badge, busy, errorBox, field, h, isolatedText, table, when } from './dom.js';
import { projectPicker } from './project-picker.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf, BodyIn, routes } from '../../core/contract/index.js' */

export { batchView } from './batch-page.js';

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context
 */
export async function batchesView(container, { signal }) {
  container.append(h('div', { class: 'page-head' }, h('h1', {}, 'Batches')));
  /** @type {[AnswerOf<'listPlugins'>, AnswerOf<'listProjects'>, import('./session.js').Me]} */
  const [plugins, projects, user] = await Promise.all([
    get('/plugins', signal),
    get('/projects', signal),
    currentUser(signal),
  ]);
  const stateFilter = h(
    'select',
    { testid: 'batches-state' },
    h('option', { value: '' }, 'any state'),
    ['running', 'succeeded', 'failed', 'cancelled'].map((s) => h('option', { value: s }, s)),
  );
  const pluginFilter = h(
    'select',
    { testid: 'batches-plugin' },
    h('option', { value: '' }, 'any plugin'),
    plugins.map((p) => h('option', { value: p.id }, p.id)),
  );
  const listBody = h('div', {});
  const older = h('button', { type: 'button', testid: 'batches-older', hidden: true }, 'Older batches');
  /** @type {string | undefined} */
  let cursor;
  /** @param {boolean} append */
  const load = async (append) => {
    const query = new URLSearchParams({ limit: '25' });
    if (stateFilter.value) query.set('state', stateFilter.value);
    if (pluginFilter.value) query.set('pluginId', pluginFilter.value);
    if (append && cursor) query.set('cursor', cursor);
    /** @type {AnswerOf<'listBatches'>} */
    const page = await get(`/batches?${query}`, signal);
    cursor = page.nextCursor;
    older.hidden = !cursor;
    const rows = page.items.map((b) => [
      h('a', { href: `#/batches/${encodeURIComponent(b.batchId)}` }, h('code', {}, b.batchId)),
      b.pluginId,
      badge(b.state),
      `${b.succeeded} succeeded, ${b.failed} failed${b.cancelled ? `, ${b.cancelled} cancelled` : ''}, ${b.pending} pending of ${b.total}`,
      h('span', {}, when(b.createdAt), ` by ${b.createdBy ?? '—'}`),
    ]);
    const tbody = listBody.querySelector('tbody');
    if (append && tbody) {
      for (const cells of rows)
        tbody.append(
          h(
            'tr',
            {},
            cells.map((c) => h('td', {}, c)),
          ),
        );
    } else {
      listBody.replaceChildren(
        table(['Batch', 'Plugin', 'State', 'Progress', 'Started'], rows, {
          testid: 'batches-table',
          class: 'data',
        }),
      );
    }
  };
  stateFilter.addEventListener('change', () => void load(false));
  pluginFilter.addEventListener('change', () => void load(false));
  older.addEventListener('click', () => void load(true));
  container.append(
    // Starting work needs the operator role; a viewer gets a note instead of a form.
    can(user, 'operator')
      ? startForm(
          plugins.filter((p) => p.enabled),
          projects,
          user,
        )
      : needsRole(user, 'operator', 'Starting a batch', 'batch-start-needs-role'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'batches-title' },
      h('h2', { id: 'batches-title' }, 'Recent batches'),
      h('div', { class: 'row' }, field('State', stateFilter), field('Plugin', pluginFilter)),
      listBody,
      h('div', { class: 'actions' }, older),
    ),
  );
  await load(false);
}

/**
 * @param {AnswerOf<'listPlugins'>} plugins the enabled ones
 * @param {AnswerOf<'listProjects'>} projects
 * @param {import('./session.js').Me} user
 */
function startForm(plugins, projects, user) {
  const errors = errorBox('batch-start-error');
  const plugin = h(
    'select',
    { required: true, testid: 'batch-plugin' },
    plugins.map((p) => h('option', { value: p.id }, `${isolatedText(p.name)} (${p.id})`)),
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
  const pick = projectPicker(projects, { disabled: true });
  const priority = prioritySelect(user, 'batch-priority');
  const sync = () => pick.setDisabled(!some.checked);
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
      pick.el,
    ),
    field('Priority in the queue', priority),
    h('div', { class: 'actions' }, button),
    errors.el,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = pick.chosen();
    if (some.checked && chosen.length === 0) {
      errors.show(new Error('Select at least one project, or choose all trusted projects.'));
      return;
    }
    void busy(button, errors, async () => {
      /** @type {BodyIn<typeof routes.createBatch>} */
      const body = { pluginId: plugin.value, projects: some.checked ? chosen : 'all' };
      if (priority.value !== 'normal') body.priority = /** @type {'high' | 'low'} */ (priority.value);
      /** @type {AnswerOf<'createBatch'>} */
      const batch = await post('/batches', body);
      navigate(`#/batches/${encodeURIComponent(batch.batchId)}`);
    });
  });
  return form;
}
