// @ts-check
// Picking projects out of thousands: a search box over id and name, the first
// matches as checkboxes, "select all matching", and a count of what is chosen.
// (A <select multiple> of 3,000 options is unusable.)
import { field, h, nextId } from './dom.js';

const SHOWN = 50;

/** @typedef {import('../../core/contract/index.js').AnswerOf<'listProjects'>[number]} Project */

/**
 * @param {Project[]} projects
 * @param {{ disabled?: boolean }} [options]
 */
export function projectPicker(projects, { disabled = false } = {}) {
  /** @type {Set<string>} */
  const chosen = new Set();
  let off = disabled;
  const search = h('input', {
    type: 'search',
    placeholder: 'Search projects by id or name',
    testid: 'picker-search',
  });
  const list = h('div', { class: 'picker-list', testid: 'picker-list' });
  const count = h('p', { class: 'hint', testid: 'picker-count', role: 'status' });
  const selectAll = h('button', { type: 'button', testid: 'picker-select-all' }, 'Select all matching');
  const clear = h('button', { type: 'button', testid: 'picker-clear' }, 'Clear');
  const matches = () => {
    const needle = search.value.trim().toLowerCase();
    return needle === ''
      ? projects
      : projects.filter((p) => p.id.includes(needle) || p.displayName.toLowerCase().includes(needle));
  };
  const render = () => {
    const found = matches();
    list.replaceChildren(
      ...found.slice(0, SHOWN).map((p) => {
        const box = h('input', {
          type: 'checkbox',
          id: nextId('pick'),
          value: p.id,
          checked: chosen.has(p.id),
          testid: `pick-${p.id}`,
        });
        box.addEventListener('change', () => {
          if (box.checked) chosen.add(p.id);
          else chosen.delete(p.id);
          render();
        });
        return h(
          'div',
          { class: 'check' },
          box,
          h('label', { for: box.id }, p.displayName, ` (${p.id})${p.trusted ? '' : ' — not trusted'}`),
        );
      }),
    );
    const more = found.length > SHOWN ? ` (showing the first ${SHOWN}; search to narrow)` : '';
    count.textContent = `${chosen.size} selected · ${found.length} matching${more}`;
    for (const control of list.querySelectorAll('input')) control.disabled = off;
  };
  search.addEventListener('input', render);
  selectAll.addEventListener('click', () => {
    for (const p of matches()) chosen.add(p.id);
    render();
  });
  clear.addEventListener('click', () => {
    chosen.clear();
    render();
  });
  const el = h(
    'div',
    { class: 'picker', testid: 'batch-projects' },
    field('Search projects', search),
    h('div', { class: 'actions' }, selectAll, clear),
    count,
    list,
  );
  /** @param {boolean} value */
  const setDisabled = (value) => {
    off = value;
    const controls = /** @type {NodeListOf<HTMLInputElement | HTMLButtonElement>} */ (
      el.querySelectorAll('input, button')
    );
    for (const control of controls) control.disabled = value;
  };
  render();
  setDisabled(disabled);
  return { el, chosen: () => [...chosen], setDisabled };
}
