// @ts-check
// Previous / next over an offset-paged list, with "rows 101–200 of 10000":
// the batch page's rows, its comparison and the fleet table page the same way.
import { h } from './dom.js';

/**
 * @typedef {{
 *   el: HTMLElement,
 *   show(offset: number, shown: number, total: number): void,
 *   again(): void,
 * }} Pager
 */

/**
 * @param {string} testid prefix: `<testid>-prev`, `<testid>-next`, `<testid>-range`
 * @param {number} size rows per page
 * @param {(offset: number) => void} go called with the offset of the page asked for
 * @returns {Pager}
 */
export function pager(testid, size, go) {
  const range = h('span', { class: 'pager-range', testid: `${testid}-range`, role: 'status' });
  const prev = h('button', { type: 'button', testid: `${testid}-prev` }, '← Previous');
  const next = h('button', { type: 'button', testid: `${testid}-next` }, 'Next →');
  let offset = 0;
  /** @type {[number, number, number]} what show() was last given */
  let last = [0, 0, 0];
  /** @param {number} at */
  const step = (at) => {
    // Until the page asked for is shown: a second click would step from the page before it.
    prev.disabled = true;
    next.disabled = true;
    go(at);
  };
  prev.addEventListener('click', () => step(Math.max(0, offset - size)));
  // From the rows shown: a page of large rows may end before `size` (HTTP-API.md, batch results).
  next.addEventListener('click', () => step(offset + (last[1] || size)));
  return {
    el: h('div', { class: 'pager' }, prev, range, next),
    show(at, shown, total) {
      last = [at, shown, total];
      offset = at;
      range.textContent =
        total === 0 ? 'No rows' : `Rows ${at + 1}–${at + shown} of ${total.toLocaleString('en')}`;
      prev.disabled = at === 0;
      next.disabled = at + shown >= total;
    },
    /** The page asked for was not read (an error): the buttons as they were. */
    again() {
      this.show(...last);
    },
  };
}
