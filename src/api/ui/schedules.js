// @ts-check
// Schedules: recurring inspections — every token sees them with their next
// run and what their last run did (a batch, a skip, a failure); operators add
// (an interval or a cron pattern, validated by the api as the CLI's are),
// pause, resume and remove them.
import { del, get, post } from './api.js';
import { flash, rerender } from './router.js';
import { busy, errorBox, field, formatDuration, formatTime, h, table, when } from './dom.js';
import { can, currentUser, needsRole, prioritySelect } from './session.js';

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
  const user = await currentUser(signal);
  const operator = can(user, 'operator');
  /** @type {[AnswerOf<'listSchedules'>, AnswerOf<'listPlugins'>]} */
  const [schedules, plugins] = await Promise.all([get('/schedules', signal), get('/plugins', signal)]);
  const listErrors = errorBox('schedules-error');
  container.append(
    operator
      ? addForm(
          plugins.filter((plugin) => plugin.enabled),
          user,
        )
      : needsRole(user, 'operator', 'Adding, pausing or removing a schedule', 'schedule-needs-operator'),
    listErrors.el,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'schedules-list-title' },
      h('h2', { id: 'schedules-list-title' }, `Schedules (${schedules.length})`),
      table(
        ['Schedule', 'Plugin', 'Projects', 'When', 'Next run', 'Last run', 'Added', 'Action'],
        schedules.map((item) => {
          const button = h('button', { type: 'button', testid: `schedule-remove-${item.id}` }, 'Remove');
          button.addEventListener('click', () =>
            busy(button, listErrors, async () => {
              await del(`/schedules/${encodeURIComponent(item.id)}`);
              flash(`Removed schedule ${item.id}.`);
              rerender();
            }),
          );
          const verb = item.pausedAt ? 'resume' : 'pause';
          const toggle = h(
            'button',
            { type: 'button', testid: `schedule-${verb}-${item.id}` },
            item.pausedAt ? 'Resume' : 'Pause',
          );
          toggle.addEventListener('click', () =>
            busy(toggle, listErrors, async () => {
              await post(`/schedules/${encodeURIComponent(item.id)}/${verb}`, {});
              flash(`${item.pausedAt ? 'Resumed' : 'Paused'} schedule ${item.name}.`);
              rerender();
            }),
          );
          return [
            h('span', {}, h('strong', {}, item.name), h('span', { class: 'sub' }, h('code', {}, item.id))),
            item.pluginId,
            item.projects === 'all'
              ? 'all trusted'
              : Array.isArray(item.projects)
                ? item.projects.join(', ')
                : `label ${item.projects.label}`,
            // a schedule has a cron pattern or an interval (the api takes one or the other)
            item.cron
              ? h('code', {}, item.cron)
              : `every ${formatDuration(/** @type {number} */ (item.everyMs))}`,
            item.pausedAt
              ? h('span', { class: 'badge' }, 'paused')
              : item.nextRunAt
                ? when(item.nextRunAt)
                : '—',
            lastRunCell(item),
            h('span', {}, when(item.createdAt), h('div', { class: 'sub' }, item.createdBy)),
            operator ? h('span', { class: 'actions' }, toggle, button) : '',
          ];
        }),
        { testid: 'schedules-table', class: 'data' },
      ),
    ),
  );
}

/**
 * What the last run did, as `schedule list` says it: when and how it ended on the first line (the
 * batch by a short id, linked), the counts below, the whole text in the title.
 * @param {AnswerOf<'listSchedules'>[number]} item
 */
function lastRunCell(item) {
  const run = item.lastRun;
  const testid = `schedule-last-${item.id}`;
  if (!run) return h('span', { testid }, '—');
  const at = when(run.at);
  const batchId = run.batchId ?? '';
  if (run.outcome === 'skipped')
    return h(
      'span',
      { testid },
      at,
      h('div', { class: 'sub' }, `skipped: previous batch ${shortId(batchId)} running`),
    );
  if (run.outcome === 'failed')
    return h(
      'span',
      { testid },
      at,
      h('div', { class: 'sub' }, `failed: ${run.error?.code ?? 'ERROR'} ${run.error?.message ?? ''}`),
    );
  const batch = run.batch;
  const link = h('a', { href: `#/batches/${encodeURIComponent(batchId)}`, title: batchId }, shortId(batchId));
  if (!batch) return h('span', { testid }, at, h('div', { class: 'sub' }, link, ' (gone)'));
  return h(
    'span',
    { testid, title: `${formatTime(run.at)}: ${batchId} ${batch.state}` },
    at,
    h('div', {}, link, ' ', batch.state),
    h(
      'div',
      { class: 'sub' },
      `${batch.succeeded} succeeded, ${batch.failed} failed, ${batch.cancelled} cancelled of ${batch.total}`,
    ),
  );
}

/** `batch_99a0bbe1-bc6e-…` → `batch_99a0bbe1`, the prefix the CLI accepts. */
function shortId(/** @type {string} */ id) {
  return id.replace(/^([a-z]+_[0-9a-f]{8})[0-9a-f-]*$/, '$1');
}

/**
 * @param {Plugin[]} plugins the enabled ones
 * @param {import('./session.js').Me} user
 */
function addForm(plugins, user) {
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
  const priority = prioritySelect(user, 'schedule-priority');
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
      field('Priority in the queue', priority),
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
    if (priority.value !== 'normal') body.priority = /** @type {'high' | 'low'} */ (priority.value);
    void busy(button, errors, async () => {
      /** @type {AnswerOf<'addSchedule'>} */
      const created = await post('/schedules', body);
      flash(`Added schedule ${created.id}.`);
      rerender();
    });
  });
  return form;
}
