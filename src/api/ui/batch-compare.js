// @ts-check
// A batch compared with another batch of the same plugin (GET /batches/:id/diff,
// the same diff as `batch diff`): the previous batch unless another is
// picked from the plugin's batches, filtered to new failures or changed
// facts, paged in the page so a large diff draws 100 rows at a time.
import { get } from './api.js';
import { badge, formatTime, h, table } from './dom.js';
import { factsList, PAGE_SIZE } from './batch-rows.js';
import { pager } from './pager.js';

/** @import { AnswerOf } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'diffBatches'>} Diff */
/** @typedef {Diff['projects'][number]} ProjectDiff */
/** @typedef {AnswerOf<'listBatches'>['items'][number]} BatchSummary */
/** @typedef {'all' | 'new-failures' | 'changed-facts'} DiffFilter */

/** How many of the plugin's batches the picker offers, newest first. */
const PICKER_BATCHES = 500;

/** @type {[DiffFilter, string][]} */
const FILTERS = [
  ['all', 'All changes'],
  ['new-failures', 'New failures'],
  ['changed-facts', 'Changed facts'],
];

/** @type {Record<DiffFilter, (p: ProjectDiff) => boolean>} */
const KEEPS = {
  all: () => true,
  'new-failures': (p) => p.status.to === 'failed' && p.status.from !== 'failed',
  'changed-facts': (p) => p.added.length + p.removed.length + p.changed.length > 0,
};

/**
 * @param {{ batchId: string, pluginId: string }} batch
 * @param {AbortSignal} signal
 * @returns {{ el: HTMLElement, refresh(): Promise<void> }}
 */
export function batchComparison(batch, signal) {
  const path = `/batches/${encodeURIComponent(batch.batchId)}`;
  const section = h('section', {
    class: 'card',
    'aria-labelledby': 'batch-diff-title',
    testid: 'batch-diff',
  });
  const title = h('h2', { id: 'batch-diff-title' }, 'Compared with another batch of this plugin');
  const picker = h('select', { id: 'batch-diff-picker', testid: 'batch-diff-picker' });
  const lede = h('p', { testid: 'batch-diff-summary' }, 'Loading…');
  const body = h('div', {});
  /** @type {DiffFilter} */
  let filter = 'all';
  /** @type {Diff | undefined} */
  let diff;
  let reads = 0;
  const filterButtons = new Map(
    FILTERS.map(([kind, label]) => [
      kind,
      h(
        'button',
        {
          type: 'button',
          class: 'chip',
          testid: `diff-filter-${kind}`,
          'aria-pressed': String(kind === filter),
        },
        label,
      ),
    ]),
  );
  const pages = pager('diff', PAGE_SIZE, (at) => showRows(at));
  /** @type {Map<string, BatchSummary>} */
  const known = new Map();

  /** @param {number} at */
  const showRows = (at) => {
    if (!diff) return;
    const rows = diff.projects.filter(KEEPS[filter]);
    const shown = rows.slice(at, at + PAGE_SIZE);
    body.replaceChildren(
      table(['Project', 'Status', 'Added', 'Removed', 'Changed'], shown.map(cellsOf), {
        class: 'data results',
        testid: 'batch-diff-table',
      }),
      pages.el,
    );
    pages.show(at, shown.length, rows.length);
  };

  /** @param {string} fromId */
  const compare = async (fromId) => {
    const read = ++reads;
    lede.textContent = 'Loading…';
    /** @type {Diff} */
    const answer = await get(`${path}/diff?from=${encodeURIComponent(fromId)}`, signal);
    if (read !== reads) return;
    diff = answer;
    const from = known.get(fromId);
    const link = h('a', { href: `#/batches/${encodeURIComponent(fromId)}` }, h('code', {}, fromId));
    const count = diff.projects.length;
    const counted = (/** @type {DiffFilter} */ kind) => diff?.projects.filter(KEEPS[kind]).length ?? 0;
    lede.replaceChildren(
      count === 0 ? 'No difference from ' : `${count} project${count === 1 ? '' : 's'} changed since `,
      link,
      from ? ` (${formatTime(from.createdAt)})` : '',
      count === 0
        ? '.'
        : `: ${counted('new-failures')} new failures, ${counted('changed-facts')} with changed facts.`,
    );
    showRows(0);
  };

  for (const [kind, button] of filterButtons) {
    button.addEventListener('click', () => {
      filter = kind;
      for (const [other, b] of filterButtons) b.setAttribute('aria-pressed', String(other === kind));
      showRows(0);
    });
  }
  picker.addEventListener('change', () =>
    compare(picker.value).catch((/** @type {Error} */ error) => {
      if (!signal.aborted) lede.textContent = `The comparison could not be read: ${error.message}`;
    }),
  );

  return {
    el: section,
    async refresh() {
      /** @type {[AnswerOf<'previousBatch'>, BatchSummary[]]} */
      const [{ previous }, others] = await Promise.all([
        get(`${path}/previous`, signal),
        pluginBatches(batch.pluginId, signal),
      ]);
      known.clear();
      for (const other of others) if (other.batchId !== batch.batchId) known.set(other.batchId, other);
      if (previous && !known.has(previous.batchId)) known.set(previous.batchId, previous);
      if (known.size === 0) {
        section.replaceChildren(
          title,
          h('p', { class: 'muted' }, 'No earlier batch of this plugin is kept.'),
        );
        return;
      }
      const chosen =
        picker.value && known.has(picker.value) ? picker.value : (previous?.batchId ?? [...known.keys()][0]);
      picker.replaceChildren(
        ...[...known.values()].map((other) =>
          h(
            'option',
            { value: other.batchId, selected: other.batchId === chosen },
            `${formatTime(other.createdAt)} · ${other.state} · ${other.failed} failed of ${other.total}${
              other.batchId === previous?.batchId ? ' (previous)' : ''
            } · ${other.batchId}`,
          ),
        ),
      );
      picker.value = /** @type {string} */ (chosen);
      section.replaceChildren(
        title,
        h(
          'div',
          { class: 'compare-controls' },
          h('label', { for: picker.id }, 'Compare with'),
          picker,
          h('div', { class: 'chips', role: 'group', 'aria-label': 'Show changes' }, [
            ...filterButtons.values(),
          ]),
        ),
        lede,
        body,
      );
      await compare(picker.value);
    },
  };
}

/**
 * The plugin's batches, newest first, at most PICKER_BATCHES.
 * @param {string} pluginId
 * @param {AbortSignal} signal
 */
async function pluginBatches(pluginId, signal) {
  /** @type {BatchSummary[]} */
  const all = [];
  /** @type {string | undefined} */
  let cursor;
  do {
    const query = new URLSearchParams({ pluginId, limit: '100' });
    if (cursor) query.set('cursor', cursor);
    /** @type {AnswerOf<'listBatches'>} */
    const page = await get(`/batches?${query}`, signal);
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor && all.length < PICKER_BATCHES);
  return all;
}

/** @param {ProjectDiff} p */
function cellsOf(p) {
  return [
    h('code', { class: 'project-id', title: p.projectId }, p.projectId),
    p.status.from === p.status.to
      ? badge(p.status.to)
      : h('span', { class: 'nowrap' }, badge(p.status.from), ' → ', badge(p.status.to)),
    factsList(p.added),
    factsList(p.removed),
    p.changed.length === 0
      ? h('span', { class: 'muted' }, 'none')
      : h(
          'ul',
          { class: 'facts-list' },
          p.changed.map((c) => h('li', {}, h('strong', {}, c.id), `: ${c.from} → ${c.to}`)),
        ),
  ];
}
