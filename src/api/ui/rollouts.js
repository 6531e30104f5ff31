// @ts-check
// Rollouts: the newest first, filtered by state and plugin, each with its
// counts as a bar; "New rollout" (operators) opens the create form
// (rollout-form.js). One rollout's page is rollout-page.js.
import { get } from './api.js';
import { badge, field, h, isolatedText, when } from './dom.js';
import { ROLLOUT_STATES, countsBar, countsText } from './rollout-parts.js';
import { can, currentUser } from './session.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf } from '../../core/contract/index.js' */

export { newRolloutView } from './rollout-form.js';
export { rolloutView } from './rollout-page.js';

const PAGE_SIZE = 25;

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context
 */
export async function rolloutsView(container, { signal }) {
  /** @type {[AnswerOf<'listPlugins'>, import('./session.js').Me]} */
  const [plugins, user] = await Promise.all([get('/plugins', signal), currentUser(signal)]);
  const stateFilter = h(
    'select',
    { testid: 'rollouts-state' },
    h('option', { value: '' }, 'any state'),
    ROLLOUT_STATES.map((state) => h('option', { value: state }, state)),
  );
  const pluginFilter = h(
    'select',
    { testid: 'rollouts-plugin' },
    h('option', { value: '' }, 'any plugin'),
    plugins.map((p) => h('option', { value: p.id }, isolatedText(p.id))),
  );
  const tbody = h('tbody', {});
  const listTable = h(
    'table',
    { class: 'data', testid: 'rollouts-table' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Rollout', 'Plugin', 'Action', 'State', 'Progress', 'Created'].map((title) =>
          h('th', { scope: 'col' }, title),
        ),
      ),
    ),
    tbody,
  );
  const older = h('button', { type: 'button', testid: 'rollouts-older', hidden: true }, 'Older rollouts');
  /** @type {string | undefined} */
  let cursor;
  let reads = 0;

  /** @param {AnswerOf<'listRollouts'>['items'][number]} rollout */
  const row = (rollout) => {
    const labelId = `rollout-progress-${rollout.id}`;
    const bar = countsBar(`rollout-bar-${rollout.id}`, labelId);
    bar.update(rollout.counts, rollout.total);
    return h(
      'tr',
      { testid: `rollout-row-${rollout.id}` },
      h(
        'td',
        {},
        h(
          'a',
          { href: `#/rollouts/${encodeURIComponent(rollout.id)}`, testid: `rollout-link-${rollout.id}` },
          rollout.name,
        ),
        h('div', { class: 'sub' }, h('code', { class: 'project-id', title: rollout.id }, rollout.id)),
      ),
      h('td', {}, h('code', {}, rollout.pluginId)),
      h('td', {}, h('code', {}, rollout.action)),
      h('td', {}, badge(rollout.state)),
      h(
        'td',
        { class: 'rollout-progress-cell' },
        bar.el,
        h('div', { class: 'sub', id: labelId }, countsText(rollout.counts, rollout.total)),
      ),
      h('td', {}, when(rollout.createdAt), h('div', { class: 'sub' }, `by ${rollout.createdBy}`)),
    );
  };

  /** @param {boolean} append the next page below the rows shown */
  const load = async (append) => {
    const read = ++reads;
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (stateFilter.value) query.set('state', stateFilter.value);
    if (pluginFilter.value) query.set('pluginId', pluginFilter.value);
    if (append && cursor) query.set('cursor', cursor);
    /** @type {AnswerOf<'listRollouts'>} */
    const page = await get(`/rollouts?${query}`, signal);
    if (read !== reads) return;
    cursor = page.nextCursor;
    older.hidden = !cursor;
    const rows = page.items.map(row);
    if (append) tbody.append(...rows);
    else
      tbody.replaceChildren(
        ...(rows.length > 0
          ? rows
          : [h('tr', {}, h('td', { colspan: '6', class: 'empty' }, 'No rollout matches.'))]),
      );
  };
  stateFilter.addEventListener('change', () => void load(false));
  pluginFilter.addEventListener('change', () => void load(false));
  older.addEventListener('click', () => void load(true));

  container.append(
    h(
      'div',
      { class: 'page-head' },
      h('h1', {}, 'Rollouts'),
      can(user, 'operator')
        ? h(
            'a',
            { href: '#/rollouts/new', class: 'button-link primary', testid: 'rollout-new' },
            'New rollout',
          )
        : null,
    ),
    h(
      'p',
      { class: 'lede' },
      'One action of one plugin on many projects, in waves, within a failure budget. ',
      'From a plugin’s Fleet page, “Act on these” starts one for the projects its filters show.',
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'rollouts-title' },
      h('h2', { id: 'rollouts-title' }, 'Newest first'),
      h('div', { class: 'row' }, field('State', stateFilter), field('Plugin', pluginFilter)),
      listTable,
      h('div', { class: 'actions' }, older),
    ),
  );
  await load(false);
}
