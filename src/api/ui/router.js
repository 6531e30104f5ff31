// @ts-check
// What a view may ask of the shell — go to a route, render the current one
// again, show a message once — without importing app.js: app.js imports every
// view, so a view importing it back made a cycle. app.js installs the renderer.
/**
 * What app.js hands every view: the signal that aborts when the page is left,
 * the route's captured groups (ids), and what follows `?` in the hash (a form's
 * prefill: `#/rollouts/new?plugin=…&where=…`).
 * @typedef {{ signal: AbortSignal, params: string[], query: URLSearchParams }} ViewContext
 */

/** @type {() => void} */
let renderCurrent = () => {};
/** @type {string | undefined} */
let flashText;

/**
 * Called once by app.js with its render function.
 * @param {() => void} render
 */
export function setRenderer(render) {
  renderCurrent = render;
}

/**
 * A message shown once at the top of the next rendered view.
 * @param {string} text
 */
export function flash(text) {
  flashText = text;
}

/** The pending flash message, handed out once. */
export function takeFlash() {
  const text = flashText;
  flashText = undefined;
  return text;
}

/** @param {string} hash a route, '#/…' */
export function navigate(hash) {
  if (location.hash === hash) renderCurrent();
  else location.hash = hash;
}

/** Renders the current route again (after an action changed what it shows). */
export function rerender() {
  renderCurrent();
}
