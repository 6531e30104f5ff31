// @ts-check
// One project (#/projects/<id>): its root, labels and trust, and per plugin
// its results across that plugin's kept batches (GET /projects/:id/history),
// newest first, with one fact's value over the batches as a chart (uPlot,
// as the Fleet page draws) where the values are numbers or versions, and
// always as a table of the values, so text values are readable too.
import uPlot from './uplot.js';
import { get } from './api.js';
import { problem } from './batch-rows.js';
import { badge, errorBox, formatTime, h, table } from './dom.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'listProjects'>[number]} Project */
/** @typedef {AnswerOf<'projectHistory'>} History */
/** @typedef {History[number]} HistoryEntry */
/** @typedef {'number' | 'version' | 'text'} ValueKind */

/** How many of a plugin's batches the page reads (the api's default for `project history`). */
const HISTORY_BATCHES = 50;
const LINE_COLOR = '#1f4f8a';

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context `params`: the project id
 */
export async function projectView(container, { signal, params: [id] }) {
  const projectId = /** @type {string} */ (id);
  /** @type {[AnswerOf<'listProjects'>, AnswerOf<'listPlugins'>]} */
  const [projects, plugins] = await Promise.all([get('/projects', signal), get('/plugins', signal)]);
  const project = projects.find((candidate) => candidate.id === projectId);
  if (!project) {
    container.append(
      h('h1', {}, 'Project not found'),
      h(
        'p',
        { testid: 'project-not-found' },
        'No project ',
        h('code', {}, projectId),
        ' is registered. ',
        h('a', { href: '#/projects' }, 'All projects'),
      ),
    );
    return;
  }
  // Each plugin's history of this project; the select offers those with any result.
  const histories = await Promise.all(
    plugins.map(async (plugin) => {
      const query = new URLSearchParams({ plugin: plugin.id, limit: String(HISTORY_BATCHES) });
      /** @type {History} */
      const history = await get(`/projects/${encodeURIComponent(projectId)}/history?${query}`, signal);
      return { pluginId: plugin.id, history };
    }),
  );
  const withResults = histories.filter(({ history }) => history.length > 0);

  container.append(
    h('p', {}, h('a', { href: '#/projects' }, '← All projects')),
    header(project),
    withResults.length === 0
      ? h(
          'section',
          { class: 'card' },
          h(
            'p',
            { class: 'muted', testid: 'project-no-history' },
            'No plugin has inspected this project yet.',
          ),
        )
      : historySection(withResults),
  );
}

/** @param {Project} project */
function header(project) {
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'project-title', testid: 'project-head' },
    h(
      'div',
      { class: 'page-head' },
      h('h1', { id: 'project-title' }, project.displayName),
      badge(project.trusted ? 'trusted' : 'not trusted', 'project-trust'),
    ),
    h(
      'dl',
      { class: 'project-facts' },
      h('dt', {}, 'Id'),
      h('dd', {}, h('code', { testid: 'project-id' }, project.id)),
      h('dt', {}, 'Root'),
      h(
        'dd',
        {},
        h('code', { testid: 'project-root' }, project.root),
        project.rootMissing
          ? [
              ' ',
              badge('root missing', 'project-root-missing'),
              h('span', { class: 'sub' }, ' nothing is run on it until it is back'),
            ]
          : null,
      ),
      h('dt', {}, 'Labels'),
      h(
        'dd',
        { testid: 'project-labels' },
        project.labels.length === 0
          ? h('span', { class: 'muted' }, 'none')
          : h(
              'span',
              { class: 'chips' },
              project.labels.map((label) => h('span', { class: 'chip' }, label)),
            ),
      ),
    ),
  );
}

/** @param {{ pluginId: string, history: History }[]} histories plugins with at least one result */
function historySection(histories) {
  const pluginPicker = h(
    'select',
    { id: 'project-plugin', testid: 'project-plugin' },
    histories.map(({ pluginId }) => h('option', { value: pluginId }, pluginId)),
  );
  const factPicker = h('select', { id: 'project-fact', testid: 'project-fact' });
  const fleetLink = h('a', { testid: 'project-fleet-link' }, 'the whole fleet of this plugin');
  const tableBox = h('div', { testid: 'project-history' });
  const chartBox = h('div', { class: 'chart', testid: 'project-chart' });
  const chartNote = h('p', { class: 'muted', testid: 'project-chart-note' });
  const valuesBox = h('div', {});
  const errors = errorBox('project-error');

  /** @returns {History} */
  const currentHistory = () =>
    histories.find(({ pluginId }) => pluginId === pluginPicker.value)?.history ?? [];

  const showPlugin = () => {
    const history = currentHistory();
    const pluginId = pluginPicker.value;
    fleetLink.setAttribute('href', `#/plugins/${encodeURIComponent(pluginId)}/fleet`);
    tableBox.replaceChildren(historyTable(history));
    const factIds = [...new Set(history.flatMap((entry) => Object.keys(entry.facts)))].sort();
    const previous = factPicker.value;
    factPicker.replaceChildren(...factIds.map((fact) => h('option', { value: fact }, fact)));
    if (factIds.includes(previous)) factPicker.value = previous;
    showFact();
  };
  const showFact = () => {
    errors.clear();
    const fact = factPicker.value;
    const history = currentHistory();
    if (!fact) {
      chartBox.replaceChildren();
      chartNote.textContent = 'No result of this plugin has a fact.';
      valuesBox.replaceChildren();
      return;
    }
    // Oldest first, as a chart reads; batches without the fact (failed, pending) are left out.
    const points = [...history].reverse().flatMap((entry) => {
      const value = entry.facts[fact]?.value;
      return value === undefined ? [] : [{ entry, value }];
    });
    const kind = kindOf(
      fact,
      points.map((point) => point.value),
    );
    chartBox.dataset.kind = kind;
    chartBox.dataset.points = String(points.length);
    if (kind === 'text') {
      chartBox.replaceChildren();
      chartNote.textContent = `${fact} is text: not plotted; its value in each batch is below.`;
    } else {
      chartNote.textContent = '';
      try {
        valueChart(chartBox, fact, kind, points);
      } catch (error) {
        errors.show(error);
      }
    }
    valuesBox.replaceChildren(valuesTable(points));
  };
  pluginPicker.addEventListener('change', showPlugin);
  factPicker.addEventListener('change', showFact);

  const section = h(
    'section',
    { class: 'card', 'aria-labelledby': 'project-history-title' },
    h(
      'div',
      { class: 'page-head' },
      h('h2', { id: 'project-history-title' }, 'Results across batches'),
      h('div', { class: 'inline-field' }, h('label', { for: 'project-plugin' }, 'Plugin'), pluginPicker),
    ),
    h(
      'p',
      { class: 'muted' },
      `Newest first; the plugin's last ${HISTORY_BATCHES} kept batches at most. See also `,
      fleetLink,
      '.',
    ),
    tableBox,
    h(
      'div',
      { class: 'page-head' },
      h('h3', {}, 'A fact over the batches'),
      h('div', { class: 'inline-field' }, h('label', { for: 'project-fact' }, 'Fact'), factPicker),
    ),
    errors.el,
    chartBox,
    chartNote,
    valuesBox,
  );
  showPlugin();
  return section;
}

/** @param {History} history newest first */
function historyTable(history) {
  return table(
    ['Batch', 'Time', 'Status', 'Summary', 'Warnings'],
    history.map((entry) => [
      h(
        'a',
        { href: `#/batches/${encodeURIComponent(entry.batchId)}`, testid: `history-batch-${entry.batchId}` },
        h('code', { class: 'project-id', title: entry.batchId }, entry.batchId),
      ),
      formatTime(entry.at),
      badge(entry.status),
      entry.error
        ? problem(entry.error)
        : entry.status === 'pending'
          ? h('span', { class: 'muted' }, 'not inspected yet')
          : (entry.summary ?? ''),
      entry.warnings.length > 0
        ? h(
            'ul',
            { class: 'warnings' },
            entry.warnings.map((text) => h('li', { class: 'warn-text' }, text)),
          )
        : '',
    ]),
    { class: 'data', testid: 'project-history-table' },
  );
}

/**
 * Each batch's value, oldest first, the batches where it changed marked.
 * @param {{ entry: HistoryEntry, value: string }[]} points
 */
function valuesTable(points) {
  return table(
    ['Batch', 'Time', 'Value', ''],
    points.map(({ entry, value }, index) => [
      h(
        'a',
        { href: `#/batches/${encodeURIComponent(entry.batchId)}` },
        h('code', { class: 'project-id', title: entry.batchId }, entry.batchId),
      ),
      formatTime(entry.at),
      h('code', {}, value),
      index > 0 && points[index - 1]?.value !== value ? h('span', { class: 'warn-text' }, 'changed') : '',
    ]),
    { class: 'data', testid: 'project-fact-values' },
  );
}

const VERSION = /^v?(\d+(?:\.\d+)*)(?:[-+].*)?$/;
const NUMBER = /^-?\d+(?:\.\d+)?$/;

/**
 * Numbers are drawn as numbers, versions (1.9, v1.20.4) on a scale of their
 * own order, anything else not at all. "1.19" and "1.9" are both: versions
 * when the fact is named a version or another value is clearly one
 * (1.20.4, v2), since 1.9 < 1.19 as versions; else numbers.
 * @param {string} fact
 * @param {string[]} values
 * @returns {ValueKind}
 */
function kindOf(fact, values) {
  if (values.length === 0) return 'text';
  const versions = values.every(isVersion);
  if (versions && (/version/i.test(fact) || values.some((value) => /^v|\..*\./.test(value))))
    return 'version';
  if (values.every((value) => NUMBER.test(value))) return 'number';
  return versions ? 'version' : 'text';
}

/** @param {string} value */
function isVersion(value) {
  return VERSION.test(value) && (value.includes('.') || value.startsWith('v'));
}

/**
 * Negative, zero or positive as version `a` sorts before, with or after `b`.
 * @param {string} a
 * @param {string} b
 */
function compareVersions(a, b) {
  const pa = (VERSION.exec(a)?.[1] ?? '').split('.').map(Number);
  const pb = (VERSION.exec(b)?.[1] ?? '').split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/**
 * The fact's value per batch, oldest first: numbers on their own scale,
 * versions one step per distinct version, in version order.
 * @param {HTMLElement} box
 * @param {string} fact
 * @param {Exclude<ValueKind, 'text'>} kind
 * @param {{ entry: HistoryEntry, value: string }[]} points
 */
function valueChart(box, fact, kind, points) {
  box.replaceChildren();
  if (points.length === 0) return;
  const xs = points.map((_point, index) => index);
  const levels = kind === 'version' ? [...new Set(points.map((p) => p.value))].sort(compareVersions) : [];
  const ys = points.map((p) => (kind === 'version' ? levels.indexOf(p.value) : Number(p.value)));
  const stepped = uPlot.paths.stepped?.({ align: 1 });
  const step = Math.ceil(points.length / 8);
  const labelled = xs.filter((index) => (points.length - 1 - index) % step === 0);
  new uPlot(
    {
      width: Math.max(320, Math.min(760, box.clientWidth || 640)),
      height: 220,
      legend: { show: false },
      scales: {
        x: { time: false, range: [-0.5, Math.max(0.5, points.length - 0.5)] },
        ...(kind === 'version' ? { y: { range: [-0.5, Math.max(0.5, levels.length - 0.5)] } } : {}),
      },
      axes: [
        {
          splits: () => labelled,
          values: (_u, splits) => splits.map((i) => (points[i] ? shortTime(points[i].entry.at) : '')),
        },
        kind === 'version'
          ? {
              label: fact,
              splits: () => levels.map((_level, index) => index),
              values: (_u, splits) => splits.map((i) => levels[i] ?? ''),
              size: 70,
            }
          : { label: fact },
      ],
      series: [
        {},
        {
          label: fact,
          stroke: LINE_COLOR,
          width: 2,
          points: { show: true, size: 7 },
          ...(stepped && kind === 'version' ? { paths: stepped } : {}),
        },
      ],
    },
    [xs, ys],
    box,
  );
  box.setAttribute('role', 'img');
  box.setAttribute('aria-label', `${fact} in each batch, oldest first; the table below has the values`);
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
