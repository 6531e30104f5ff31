// @ts-check
// What the Rollouts list and a rollout's page both draw: its counts as a bar
// (failures visible while it runs) with the same words beside it.
import { h } from './dom.js';

/** @import { AnswerOf } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'getRollout'>} Rollout */
/** @typedef {Rollout['counts']} Counts */

/** docs/CLI.md "Rollouts": every state a rollout may be in (the list's filter). */
export const ROLLOUT_STATES = [
  'previewing',
  'awaiting-approval',
  'running',
  'paused',
  'succeeded',
  'failed',
  'cancelled',
];

/** @param {string} state a rollout's: nothing more will run */
export function isOver(state) {
  return state === 'succeeded' || state === 'failed' || state === 'cancelled';
}

/** @param {Counts} counts projects whose operation ended, however */
export function ended(counts) {
  return counts.succeeded + counts.failed + counts.cancelled + counts.outcome_unknown;
}

/**
 * The counts in words: "3 of 10 ended — 2 succeeded, 1 failed, 7 pending".
 * @param {Counts} counts
 * @param {number} total
 */
export function countsText(counts, total) {
  /** @type {[keyof Counts, string][]} */
  const words = [
    ['succeeded', 'succeeded'],
    ['failed', 'failed'],
    ['outcome_unknown', 'outcome unknown'],
    ['cancelled', 'cancelled'],
    ['running', 'running'],
    ['pending', 'pending'],
  ];
  const parts = words.filter(([key]) => counts[key] > 0).map(([key, word]) => `${counts[key]} ${word}`);
  return `${ended(counts)} of ${total} ended${parts.length ? ` — ${parts.join(', ')}` : ''}`;
}

/** The bar's segments, left to right; the rest of the bar is what has not started. */
const SEGMENTS = /** @type {const} */ (['succeeded', 'failed', 'outcome_unknown', 'cancelled', 'running']);

/**
 * A bar of the counts (role progressbar: ended of total), labelled by `labelId`'s element.
 * `update()` moves it to new counts.
 * @param {string} testid
 * @param {string} labelId
 */
export function countsBar(testid, labelId) {
  /** @type {Record<string, HTMLSpanElement>} */
  const segments = {};
  for (const kind of SEGMENTS)
    segments[kind] = h('span', {
      class: `bar-seg bar-${kind.replace('_', '-')}`,
      testid: `${testid}-${kind}`,
    });
  const el = h(
    'div',
    {
      class: 'batch-bar',
      role: 'progressbar',
      testid,
      'aria-labelledby': labelId,
      'aria-valuemin': '0',
    },
    SEGMENTS.map((kind) => segments[kind]),
  );
  return {
    el,
    /**
     * @param {Counts} counts
     * @param {number} total
     */
    update(counts, total) {
      const whole = Math.max(1, total);
      for (const kind of SEGMENTS) {
        const segment = /** @type {HTMLSpanElement} */ (segments[kind]);
        segment.style.width = `${(100 * counts[kind]) / whole}%`;
      }
      el.setAttribute('aria-valuemax', String(total));
      el.setAttribute('aria-valuenow', String(ended(counts)));
      el.dataset.failed = String(counts.failed + counts.outcome_unknown);
    },
  };
}
