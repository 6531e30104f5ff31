// @ts-check
// A plugin's fleet: each project's latest successful result
// (GET /plugins/:id/facts, /facts/counts, /trend). How many projects have
// each value of a fact, as a bar chart with the counts in a table beside it;
// the projects × facts table, filtered as `facts --where` filters
// (NAME=VALUE, !=, ~REGEX, <, <=, >, >= version-aware) and to one label
// (`facts --label`), sorted by any fact and paged on the server; and the trend of the plugin's batches. The charts
// are uPlot's, served by the api from node_modules. "Act on these" (operators)
// opens the new-rollout form with the table's filters and label as its selection.
import uPlot from './uplot.js';
import { get } from './api.js';
import { errorBox, formatTime, h, table } from './dom.js';
import { pager } from './pager.js';
import { navigate } from './router.js';
import { can, currentUser } from './session.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'pluginFacts'>} FleetPage */
/** @typedef {FleetPage['items'][number]} FleetRow */
/** @typedef {AnswerOf<'pluginFactCounts'>} FactCounts */
/** @typedef {AnswerOf<'pluginTrend'>} Trend */

const PAGE_SIZE = 100;
/** The chart draws the most common values; the table beside it lists them all. */
const CHART_VALUES = 30;
const TREND_BATCHES = 20;
const COLORS = { bar: '#1f4f8a', succeeded: '#2f8a4a', failed: '#c0392b', newFailures: '#d9a21b' };

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context `params`: the plugin id
 */
export async function fleetView(container, { signal, params: [id] }) {
  const pluginId = /** @type {string} */ (id);
  const base = `/plugins/${encodeURIComponent(pluginId)}`;
  // The fact ids: those of the first rows (a plugin reports the same facts for most projects).
  /** @type {[FleetPage, Trend, AnswerOf<'listProjects'>, import('./session.js').Me]} */
  const [sample, trend, projects, user] = await Promise.all([
    get(`${base}/facts?limit=500`, signal),
    get(`${base}/trend?batches=${TREND_BATCHES}`, signal),
    get('/projects', signal),
    currentUser(signal),
  ]);
  const factIds = [...new Set(sample.items.flatMap((row) => Object.keys(row.facts)))].sort();
  const labels = [...new Set(projects.flatMap((project) => project.labels))].sort();

  /** @type {string[]} */
  let filters = [];
  /** Only projects with this label (the api's `label`, as `facts --label`); '' for all. */
  let label = '';
  let chartFact = factIds[0] ?? '';
  /** @type {{ fact: string, order: 'asc' | 'desc' } | undefined} */
  let sort;
  /** Cursor of each page read so far (the first: none): Previous steps back through them. */
  /** @type {(string | undefined)[]} */
  let cursors = [undefined];
  /** @type {string | undefined} */
  let nextCursor;
  let reads = 0;
  /** @type {{ key: string, counts: FactCounts } | undefined} */
  let shownCounts;

  const errors = errorBox('fleet-error');
  const factPicker = h(
    'select',
    { id: 'fleet-fact', testid: 'fleet-fact' },
    factIds.map((fact) => h('option', { value: fact }, fact)),
  );
  const whereInput = h('input', {
    type: 'text',
    id: 'fleet-where',
    testid: 'fleet-where',
    placeholder: 'go.version<1.20',
    spellcheck: 'false',
    autocomplete: 'off',
  });
  const whereForm = h(
    'form',
    { class: 'fleet-where' },
    h('label', { for: 'fleet-where' }, 'Filter'),
    whereInput,
    h('button', { type: 'submit', testid: 'fleet-where-add' }, 'Add filter'),
    h(
      'p',
      { class: 'hint' },
      'NAME=VALUE, NAME!=VALUE, NAME~REGEX, or NAME<VALUE (also <=, >, >=; versions compare as versions: 1.9 < 1.20). Every filter must match.',
    ),
  );
  const labelPicker = h(
    'select',
    { id: 'fleet-label', testid: 'fleet-label', disabled: labels.length === 0 },
    h('option', { value: '' }, labels.length === 0 ? 'no project has a label' : 'any'),
    labels.map((name) => h('option', { value: name }, name)),
  );
  const filterChips = h('div', { class: 'chips', testid: 'fleet-filters' });
  const chartBox = h('div', { class: 'chart', testid: 'fleet-chart' });
  const countsBox = h('div', { testid: 'fleet-counts' });
  const chartNote = h('p', { class: 'muted', testid: 'fleet-chart-note' });
  const tableBox = h('div', { testid: 'fleet-table' });
  const pages = pager('fleet', PAGE_SIZE, (offset) => {
    const index = offset / PAGE_SIZE;
    const before = cursors;
    if (index > cursors.length - 1 && nextCursor) cursors = [...cursors, nextCursor];
    else cursors = cursors.slice(0, index + 1);
    void load().catch((error) => {
      cursors = before;
      pages.again();
      errors.show(error);
    });
  });
  const trendBox = h('div', { class: 'chart', testid: 'trend-chart' });
  // A rollout of one of the plugin's actions on the projects the filters show (operators).
  const actOnThese = can(user, 'operator')
    ? h(
        'button',
        {
          type: 'button',
          testid: 'fleet-act',
          title: 'Create a rollout whose selection is this page’s filters and label',
          onclick: () => {
            const prefill = new URLSearchParams([
              ['plugin', pluginId],
              ...filters.map((filter) => ['where', filter]),
              ...(label ? [['label', label]] : []),
            ]);
            navigate(`#/rollouts/new?${prefill}`);
          },
        },
        'Act on these…',
      )
    : null;

  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Fleet of ', h('code', {}, pluginId))),
    h(
      'p',
      {},
      h('a', { href: `#/plugins/${encodeURIComponent(pluginId)}` }, '← The plugin'),
      ' · each project’s latest successful inspection (a failed one leaves the last good facts).',
    ),
    errors.el,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'fleet-chart-title' },
      h(
        'div',
        { class: 'page-head' },
        h('h2', { id: 'fleet-chart-title' }, 'Projects by value'),
        h('div', { class: 'inline-field' }, h('label', { for: 'fleet-fact' }, 'Fact'), factPicker),
      ),
      factIds.length === 0
        ? h('p', { class: 'muted' }, 'No project has a successful inspection by this plugin yet.')
        : null,
      h('div', { class: 'chart-with-table' }, chartBox, countsBox),
      chartNote,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'fleet-table-title' },
      h(
        'div',
        { class: 'page-head' },
        h('h2', { id: 'fleet-table-title' }, 'Projects'),
        h(
          'div',
          { class: 'actions wrap' },
          h('div', { class: 'inline-field' }, h('label', { for: 'fleet-label' }, 'Label'), labelPicker),
          actOnThese,
        ),
      ),
      whereForm,
      filterChips,
      tableBox,
      pages.el,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'trend-title' },
      h('h2', { id: 'trend-title' }, `Trend: the last ${TREND_BATCHES} batches at most`),
      trendBox,
      trendTable(trend),
    ),
  );

  /** @param {string[]} next */
  const setFilters = (next) => {
    const before = filters;
    filters = next;
    cursors = [undefined];
    showFilters();
    void load().catch((error) => {
      // A filter the api refused (a bad NAME<op>VALUE, a bad regex) is dropped, with the reason shown.
      if (filters === next) {
        filters = before;
        showFilters();
      }
      errors.show(error);
    });
  };
  const showFilters = () => {
    filterChips.replaceChildren(
      ...filters.map((filter, index) =>
        h(
          'button',
          {
            type: 'button',
            class: 'chip',
            testid: `fleet-filter-${index}`,
            title: 'Remove this filter',
            onclick: () => setFilters(filters.filter((_f, i) => i !== index)),
          },
          filter,
          ' ✕',
        ),
      ),
    );
  };

  const load = async () => {
    errors.clear();
    const read = ++reads;
    const where = [...filters.map((filter) => ['where', filter]), ...(label ? [['label', label]] : [])];
    const rowsQuery = new URLSearchParams([...where, ['limit', String(PAGE_SIZE)]]);
    if (sort) rowsQuery.set('sort', sort.fact);
    if (sort) rowsQuery.set('order', sort.order);
    const cursor = cursors.at(-1);
    if (cursor) rowsQuery.set('cursor', cursor);
    const countsQuery = new URLSearchParams([...where, ['fact', chartFact]]);
    // The counts read the whole fleet: asked again only when the fact or the filters change, not per page.
    const countsKey = chartFact ? String(countsQuery) : '';
    /** @type {[FleetPage, FactCounts | undefined]} */
    const [rows, counts] = await Promise.all([
      get(`${base}/facts?${rowsQuery}`, signal),
      countsKey === shownCounts?.key
        ? shownCounts.counts
        : chartFact
          ? get(`${base}/facts/counts?${countsQuery}`, signal)
          : undefined,
    ]);
    if (read !== reads) return;
    shownCounts = counts ? { key: countsKey, counts } : undefined;
    nextCursor = rows.nextCursor;
    const offset = (cursors.length - 1) * PAGE_SIZE;
    tableBox.replaceChildren(projectsTable(rows.items));
    // The counts answer's total is the filtered fleet's size (the pages' "of N").
    const total = counts?.total ?? offset + rows.items.length + (rows.nextCursor ? 1 : 0);
    pages.show(offset, rows.items.length, total);
    if (counts) showCounts(counts);
  };

  /** @param {FleetRow[]} items */
  const projectsTable = (items) => {
    const headers = ['Project', ...factIds].map((name, index) => {
      const fact = index === 0 ? undefined : name;
      const sorted = fact !== undefined && sort?.fact === fact;
      const unsorted = index === 0 && sort === undefined;
      return h(
        'th',
        {
          scope: 'col',
          'aria-sort': sorted
            ? sort?.order === 'desc'
              ? 'descending'
              : 'ascending'
            : unsorted
              ? 'ascending'
              : null,
        },
        h(
          'button',
          {
            type: 'button',
            class: 'sort-button',
            testid: `fleet-sort-${name}`,
            onclick: () => {
              sort =
                fact === undefined
                  ? undefined
                  : { fact, order: sorted && sort?.order === 'asc' ? 'desc' : 'asc' };
              cursors = [undefined];
              void load().catch((error) => errors.show(error));
            },
          },
          name,
          sorted ? (sort?.order === 'desc' ? ' ▼' : ' ▲') : unsorted ? ' ▲' : '',
        ),
      );
    });
    return h(
      'table',
      { class: 'data results', testid: 'fleet-rows' },
      h('thead', {}, h('tr', {}, headers)),
      h(
        'tbody',
        {},
        items.length === 0
          ? h('tr', {}, h('td', { colspan: String(headers.length), class: 'empty' }, 'No project matches.'))
          : items.map((row) =>
              h(
                'tr',
                {},
                h(
                  'td',
                  {},
                  h(
                    'a',
                    {
                      href: `#/projects/${encodeURIComponent(row.projectId)}`,
                      testid: `fleet-project-${row.projectId}`,
                    },
                    h('code', { class: 'project-id', title: row.projectId }, row.projectId),
                  ),
                ),
                factIds.map((fact) => {
                  const value = row.facts[fact];
                  if (!value) return h('td', { class: 'muted' }, '—');
                  return h(
                    'td',
                    { 'data-fact': fact },
                    value.value,
                    value.warning ? h('span', { class: 'warn-text', title: value.warning }, ' ⚠') : null,
                  );
                }),
              ),
            ),
      ),
    );
  };

  /** @param {FactCounts} counts */
  const showCounts = (counts) => {
    countsBox.replaceChildren(
      table(
        ['Value', 'Projects', ''],
        counts.counts.map((entry) => [
          entry.value === null ? h('span', { class: 'muted' }, '(no such fact)') : h('code', {}, entry.value),
          entry.count.toLocaleString('en'),
          entry.value === null
            ? ''
            : h(
                'button',
                {
                  type: 'button',
                  class: 'text-button',
                  testid: `fleet-only-${entry.value}`,
                  onclick: () => setFilters([...filters, `${counts.fact}=${entry.value}`]),
                },
                'only these',
              ),
        ]),
        { class: 'data', testid: 'fleet-counts-table' },
      ),
    );
    const drawn = counts.counts.slice(0, CHART_VALUES);
    chartNote.textContent =
      counts.counts.length > drawn.length
        ? `The chart shows the ${drawn.length} most common of ${counts.counts.length} values; the table lists them all.`
        : '';
    barChart(
      chartBox,
      drawn.map((entry) => entry.value ?? '(none)'),
      drawn.map((entry) => entry.count),
      counts.fact,
    );
  };

  labelPicker.addEventListener('change', () => {
    label = labelPicker.value;
    cursors = [undefined];
    void load().catch((error) => errors.show(error));
  });
  factPicker.addEventListener('change', () => {
    chartFact = factPicker.value;
    void load().catch((error) => errors.show(error));
  });
  whereForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = whereInput.value.trim();
    if (!text) return;
    whereInput.value = '';
    setFilters([...filters, text]);
  });

  lineChart(trendBox, trend);
  await load();
}

/**
 * As wide as its box allows (a phone's screen), at most 760 px, at least 240 (it scrolls inside below that).
 * @param {HTMLElement} box
 */
function chartWidth(box) {
  return Math.max(240, Math.min(760, box.clientWidth || 760));
}

/**
 * Value → projects as bars (uPlot, on a canvas).
 * @param {HTMLElement} box
 * @param {string[]} labels
 * @param {number[]} counts
 * @param {string} fact
 */
function barChart(box, labels, counts, fact) {
  box.replaceChildren();
  if (labels.length === 0) return;
  const xs = labels.map((_label, index) => index);
  const bars = uPlot.paths.bars?.({ size: [0.7, 80] });
  new uPlot(
    {
      width: chartWidth(box),
      height: 260,
      legend: { show: false },
      cursor: { show: false },
      scales: {
        x: { time: false, range: [-0.5, labels.length - 0.5] },
        y: { range: [0, Math.max(...counts) * 1.1] },
      },
      axes: [
        {
          splits: () => xs,
          values: (_u, splits) => splits.map((i) => labels[i] ?? ''),
          // Many values: slanted, so each keeps its label.
          ...(labels.length > 8 ? { rotate: -40, size: 90 } : {}),
        },
        { label: 'projects' },
      ],
      series: [
        {},
        {
          label: fact,
          fill: COLORS.bar,
          stroke: COLORS.bar,
          points: { show: false },
          ...(bars ? { paths: bars } : {}),
        },
      ],
    },
    [xs, counts],
    box,
  );
  box.dataset.bars = String(labels.length);
  box.setAttribute('role', 'img');
  box.setAttribute('aria-label', `Projects per value of ${fact}; the table beside it has the numbers`);
}

/**
 * The trend: succeeded, failed and new failures per batch, oldest first.
 * @param {HTMLElement} box
 * @param {Trend} allPoints
 */
function lineChart(box, allPoints) {
  // A batch over part of the fleet (a label, named projects) would read as an outage among whole-fleet
  // batches: the chart draws the whole-fleet ones when there are any (the table lists every batch).
  const whole = allPoints.filter((point) => !point.partial);
  const trend = whole.length > 0 ? whole : allPoints;
  if (trend.length === 0) {
    box.replaceChildren(h('p', { class: 'muted' }, 'No batch of this plugin is kept.'));
    return;
  }
  const xs = trend.map((_point, index) => index);
  // At most about eight dates under the axis; every batch still has its point.
  const step = Math.ceil(trend.length / 8);
  const labelled = xs.filter((index) => (trend.length - 1 - index) % step === 0);
  /** @param {string} label @param {string} color */
  const series = (label, color) => ({ label, stroke: color, width: 2, points: { show: true, size: 6 } });
  new uPlot(
    {
      width: chartWidth(box),
      height: 240,
      scales: { x: { time: false, range: [-0.5, Math.max(0.5, trend.length - 0.5)] } },
      axes: [
        {
          splits: () => labelled,
          values: (_u, splits) => splits.map((i) => (trend[i] ? shortTime(trend[i].createdAt) : '')),
        },
        { label: 'projects' },
      ],
      series: [
        {
          label: 'Batch',
          value: (_u, index) => (index !== null && trend[index] ? shortTime(trend[index].createdAt) : '—'),
        },
        series('succeeded', COLORS.succeeded),
        series('failed', COLORS.failed),
        series('new failures', COLORS.newFailures),
      ],
    },
    [xs, trend.map((p) => p.succeeded), trend.map((p) => p.failed), trend.map((p) => p.newFailures)],
    box,
  );
  box.dataset.points = String(trend.length);
}

/** @param {string} iso a batch's creation time, as "Dec 5, 14:03" */
function shortTime(iso) {
  return new Date(iso).toLocaleString(undefined, {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });
}

/** @param {Trend} trend */
function trendTable(trend) {
  return table(
    ['Batch', 'Started', 'State', 'Succeeded', 'Failed', 'New failures'],
    [...trend]
      .reverse()
      .map((point) => [
        h(
          'a',
          { href: `#/batches/${encodeURIComponent(point.batchId)}` },
          h('code', { class: 'project-id', title: point.batchId }, point.batchId),
        ),
        formatTime(point.createdAt),
        point.partial ? `${point.state} (part of the fleet)` : point.state,
        String(point.succeeded),
        String(point.failed),
        String(point.newFailures),
      ]),
    { class: 'data', testid: 'trend-table' },
  );
}

/**
 * The nav's Fleet: each plugin's fleet page.
 * @param {HTMLElement} container
 * @param {ViewContext} context
 */
export async function fleetsView(container, { signal }) {
  /** @type {AnswerOf<'listPlugins'>} */
  const plugins = await get('/plugins', signal);
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Fleet')),
    h('p', { class: 'lede' }, 'What each plugin found across the projects: pick a plugin.'),
    table(
      ['Plugin', 'Name'],
      plugins.map((plugin) => [
        h(
          'a',
          { href: `#/plugins/${encodeURIComponent(plugin.id)}/fleet`, testid: `fleet-link-${plugin.id}` },
          h('code', {}, plugin.id),
        ),
        plugin.name,
      ]),
      { class: 'data', testid: 'fleets-table' },
    ),
  );
}
