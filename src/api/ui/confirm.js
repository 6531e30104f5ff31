// @ts-check
// A modal that says what is about to change before it does (the CLI's --yes):
// a title, the consequences, Back and the action's own word. Nothing is sent
// until that button is pressed; Escape and Back send nothing.
import { h } from './dom.js';

/**
 * @typedef {{
 *   el: HTMLDialogElement,
 *   ask(what: { title: string, body: (Node | string)[], confirm: string, danger?: boolean }, then: () => void): void,
 * }} ConfirmDialog
 */

/**
 * @param {string} testid the dialog's; its buttons are `<testid>-yes` and `<testid>-back`
 * @returns {ConfirmDialog}
 */
export function confirmDialog(testid) {
  const titleId = `${testid}-title`;
  const title = h('h2', { id: titleId });
  const body = h('div', { testid: `${testid}-text` });
  const yes = h('button', { type: 'button', testid: `${testid}-yes` });
  const back = h('button', { type: 'button', testid: `${testid}-back` }, 'Back');
  const el = h(
    'dialog',
    { class: 'confirm', testid, 'aria-labelledby': titleId },
    title,
    body,
    h('div', { class: 'actions' }, back, yes),
  );
  /** @type {(() => void) | undefined} */
  let onYes;
  yes.addEventListener('click', () => {
    el.close();
    const go = onYes;
    onYes = undefined;
    go?.();
  });
  back.addEventListener('click', () => {
    onYes = undefined;
    el.close();
  });
  el.addEventListener('close', () => (onYes = undefined));
  return {
    el,
    ask(what, then) {
      title.textContent = what.title;
      body.replaceChildren(...what.body.map((part) => (typeof part === 'string' ? h('p', {}, part) : part)));
      yes.textContent = what.confirm;
      yes.className = what.danger ? 'danger' : 'primary';
      // Set after showModal: a close event from an earlier question would clear it.
      el.showModal();
      onYes = then;
      back.focus();
    },
  };
}
