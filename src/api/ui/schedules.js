// @ts-check
// Schedules (admin): recurring inspections — list, add (an interval or a cron
// pattern, validated by the api as the CLI's are), remove.
import { del, get, post } from './api.js';
import { flash, rerender } from './router.js';
import { busy, errorBox, field, formatDuration, formatTime, h, table } from './dom.js';
import { adminOnly } from './session.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf, BodyIn, routes } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'listPlugins'>[number]} Plugin */

/** @type {[string, number][]} */
const EVERY = [
  ['1 hour', 3_600_000],
  ['6 hours', 21_600_000],
  ['1 day', 86_400_000],
  ['1 week', 604_800_000],
];

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context
 */
export async function schedulesView(container, { signal }) {
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Schedules')),
    h(
      'p',
      { class: 'lede' },
      'Recurring inspections: a plugin over projects, on an interval or a cron pattern.',
    ),
  );
  if (!(await adminOnly(container, signal))) return;
  /** @type {[AnswerOf<'listSchedules'>, AnswerOf<'listPlugins'>]} */
  const [schedules, plugins] = await Promise.all([get('/schedules', signal), get('/plugins', signal)]);
  const listErrors = errorBox('schedules-error');
  container.append(
    addForm(plugins.filter((plugin) => plugin.enabled)),
    listErrors.el,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'schedules-list-title' },
      h('h2', { id: 'schedules-list-title' }, `Schedules (${schedules.length})`),
      table(
        ['Schedule', 'Plugin', 'Projects', 'When', 'Added', 'Action'],
        schedules.map((item) => {
          const button = h('button', { type: 'button', testid: `schedule-remove-${item.id}` }, 'Remove');
          button.addEventListener('click', () =>
            busy(button, listErrors, async () => {
              await del(`/schedules/${encodeURIComponent(item.id)}`);
              flash(`Removed schedule ${item.id}.`);
              rerender();
            }),
          );
          return [
            h('code', {}, item.id),
            item.pluginId,
            item.projects === 'all' ? 'all trusted' : item.projects.join(', '),
            // a schedule has a cron pattern or an interval (the api takes one or the other)
            item.cron
              ? h('code', {}, item.cron)
              : `every ${formatDuration(/** @type {number} */ (item.everyMs))}`,
            h('span', {}, formatTime(item.createdAt), h('span', { class: 'sub' }, item.createdBy)),
            button,
          ];
        }),
        { testid: 'schedules-table', class: 'data' },
      ),
    ),
  );
}

/** @param {Plugin[]} plugins the enabled ones */
function addForm(plugins) {
  const errors = errorBox('schedule-add-error');
  const plugin = h(
    'select',
    { required: true, testid: 'schedule-plugin' },
    plugins.map((p) => h('option', { value: p.id }, `${p.name} (${p.id})`)),
  );
  const projects = h('input', {
    type: 'text',
    testid: 'schedule-projects',
    placeholder: 'all',
  });
  const cron = h('input', { type: 'text', class: 'mono', testid: 'schedule-cron', placeholder: '0 3 * * *' });
  const every = h(
    'select',
    { testid: 'schedule-every' },
    h('option', { value: '' }, '— use the cron pattern —'),
    EVERY.map(([label, ms]) => h('option', { value: String(ms) }, label)),
  );
  const button = h('button', { type: 'submit', class: 'primary', testid: 'schedule-add' }, 'Add schedule');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'schedule-add-title' },
    h('h2', { id: 'schedule-add-title' }, 'Add a schedule'),
    plugins.length === 0 ? h('p', { class: 'hint' }, 'Enable a plugin first.') : null,
    h(
      'div',
      { class: 'row' },
      field('Plugin', plugin),
      field('Projects', projects, 'Project ids separated by commas; empty means every trusted project.'),
      field('Cron pattern', cron, 'minute hour day month weekday'),
      field('Or an interval', every),
    ),
    h('div', { class: 'actions' }, button),
    errors.el,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const ids = projects.value
      .split(',')
      .map((id) => id.trim())
      .filter(Boolean);
    /** @type {BodyIn<typeof routes.addSchedule>} */
    const body = { pluginId: plugin.value, projects: ids.length > 0 ? ids : 'all' };
    if (every.value) body.everyMs = Number(every.value);
    else body.cron = cron.value.trim();
    void busy(button, errors, async () => {
      /** @type {AnswerOf<'addSchedule'>} */
      const created = await post('/schedules', body);
      flash(`Added schedule ${created.id}.`);
      rerender();
    });
  });
  return form;
}
