// @ts-check
// A batch's per-project rows, one page at a time from the server
// (GET /batches/:id/results), so a 10,000-project batch draws 100 rows, not
// 10,000: status chips with their counts filter them, failures come first,
// and an error reads as the plugin's message with the protocol's code folded
// into a details element.
import { get } from './api.js';
import { badge, h, table } from './dom.js';
import { pager } from './pager.js';

/** @import { AnswerOf } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'batchResults'>} ResultsPage */
/** @typedef {ResultsPage['items'][number]} Row */
/** @typedef {ResultsPage['batch']} Counts */
/** @typedef {AnswerOf<'diffBatches'>['projects'][number]['added'][number]} Fact */
/** @typedef {'all' | 'failed' | 'cancelled' | 'pending' | 'succeeded'} Chip */

/** Rows per page: enough to scan, few enough to draw at once. */
export const PAGE_SIZE = 100;
/** @type {Chip[]} */
const CHIPS = ['all', 'failed', 'cancelled', 'pending', 'succeeded'];
/** While a batch runs, new outcomes re-read the page at most this often. */
const REFRESH_MS = 500;

/**
 * @typedef {{
 *   el: HTMLElement,
 *   chips: HTMLElement,
 *   load(offset?: number): Promise<Counts | undefined>,
 *   refreshSoon(): void,
 *   showCounts(counts: Omit<Counts, 'batchId' | 'pluginId' | 'createdAt' | 'createdBy'>): void,
 * }} BatchRows
 */

/**
 * @param {string} path the batch's, under /api/v1
 * @param {AbortSignal} signal
 * @param {(counts: Counts) => void} onCounts the batch as each page read it (counts and state)
 * @returns {BatchRows}
 */
export function batchRows(path, signal, onCounts) {
  /** @type {Chip} */
  let status = 'all';
  let offset = 0;
  let reads = 0;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const buttons = new Map(
    CHIPS.map((kind) => [
      kind,
      h('button', {
        type: 'button',
        class: `chip chip-${kind}`,
        testid: `chip-${kind}`,
        'aria-pressed': String(kind === status),
      }),
    ]),
  );
  const body = h('div', { testid: 'batch-results' });
  const pages = pager('results', PAGE_SIZE, (at) => void load(at).catch(() => pages.again()));

  /** @param {number} [at] */
  const load = async (at = offset) => {
    const read = ++reads;
    const query = new URLSearchParams({ offset: String(at), limit: String(PAGE_SIZE) });
    if (status !== 'all') query.set('status', status);
    /** @type {ResultsPage} */
    const page = await get(`${path}/results?${query}`, signal);
    if (read !== reads) return undefined; // a newer read (another page or chip) answers instead
    // Past the end (fewer rows match than when the page was chosen): the last page.
    if (page.items.length === 0 && page.total > 0 && at > 0)
      return load(Math.floor((page.total - 1) / PAGE_SIZE) * PAGE_SIZE);
    offset = page.offset;
    showCounts(page.batch);
    body.replaceChildren(
      table(['Project', 'Status', 'Summary', 'Facts', 'Warnings and errors'], page.items.map(cellsOf), {
        class: 'data results',
        testid: 'batch-results-table',
      }),
    );
    pages.show(page.offset, page.items.length, page.total);
    onCounts(page.batch);
    return page.batch;
  };

  /** @param {Parameters<BatchRows['showCounts']>[0]} counts */
  const showCounts = (counts) => {
    /** @type {Record<Chip, number>} */
    const numbers = {
      all: counts.total,
      failed: counts.failed,
      cancelled: counts.cancelled,
      pending: counts.pending,
      succeeded: counts.succeeded,
    };
    for (const [kind, button] of buttons) {
      button.replaceChildren(
        `${kind[0]?.toUpperCase()}${kind.slice(1)}`,
        ' ',
        h('span', { class: 'chip-count', testid: `count-${kind}` }, numbers[kind].toLocaleString('en')),
      );
    }
  };

  for (const [kind, button] of buttons) {
    button.addEventListener('click', () => {
      status = kind;
      for (const [other, b] of buttons) b.setAttribute('aria-pressed', String(other === kind));
      void load(0).catch(() => pages.again());
    });
  }

  const chips = h(
    'div',
    { class: 'chips', role: 'group', 'aria-label': 'Show projects by status', testid: 'status-chips' },
    [...buttons.values()],
  );
  return {
    el: h('div', {}, body, pages.el),
    chips,
    load,
    refreshSoon() {
      if (timer !== undefined) return;
      timer = setTimeout(() => {
        timer = undefined;
        if (!signal.aborted) void load().catch(() => {});
      }, REFRESH_MS);
    },
    showCounts,
  };
}

/** @param {Row} row */
function cellsOf(row) {
  const id = h(
    'a',
    { href: `#/projects/${encodeURIComponent(row.projectId)}`, testid: `row-project-${row.projectId}` },
    h('code', { class: 'project-id', title: row.projectId }, row.projectId),
  );
  if (row.status === 'pending') return [id, badge('pending'), '', '', ''];
  const warnings = row.result?.warnings ?? [];
  return [
    id,
    badge(row.status),
    summaryOf(row),
    factsList(row.result?.facts),
    [
      warnings.length > 0
        ? h(
            'ul',
            { class: 'warnings' },
            warnings.map((text) => h('li', { class: 'warn-text' }, text)),
          )
        : null,
      row.error ? problem(row.error) : null,
    ],
  ];
}

/** @param {Exclude<Row, { status: 'pending' }>} row */
function summaryOf(row) {
  if (!row.result) return '';
  // `redacted` is not in the contract's inspect result (the api does not send it yet); read as before
  if (!(/** @type {{ redacted?: boolean }} */ (row.result).redacted)) return row.result.summary;
  return h(
    'span',
    {},
    row.result.summary,
    ' ',
    h('span', { class: 'muted', title: 'the host replaced a secret in this result' }, '(redacted)'),
  );
}

/**
 * An error as a person reads it: the plugin's own message first; the host's
 * code and the JSON-RPC code ("plugin error -32000: …") under Details.
 * @param {{ code: string, message: string }} error
 */
export function problem(error) {
  const rpc = /^plugin error (-?\d+): ([\s\S]*)$/.exec(error.message);
  return h(
    'div',
    { class: 'problem' },
    h('span', { class: 'error-text', testid: 'row-error' }, rpc ? rpc[2] : error.message),
    h(
      'details',
      { class: 'problem-details' },
      h('summary', {}, 'Details'),
      h('code', {}, error.code),
      rpc ? [' ', h('code', {}, rpc[1])] : null,
    ),
  );
}

/** @param {Fact[] | undefined} facts */
export function factsList(facts) {
  if (!Array.isArray(facts) || facts.length === 0) return h('span', { class: 'muted' }, 'none');
  return h(
    'ul',
    { class: 'facts-list' },
    facts.map((f) =>
      h(
        'li',
        {},
        h('strong', {}, f.label ?? f.id),
        ': ',
        typeof f.value === 'string' ? f.value : JSON.stringify(f.value),
        f.source ? h('span', { class: 'sub' }, ` (${f.source})`) : null,
        f.warning ? h('span', { class: 'warn-text' }, ` ⚠ ${f.warning}`) : null,
      ),
    ),
  );
}
