// What a view may ask of the shell — go to a route, render the current one
// again, show a message once — without importing app.js: app.js imports every
// view, so a view importing it back made a cycle. app.js installs the renderer.
let renderCurrent = () => {};
let flashText;

/** Called once by app.js with its render function. */
export function setRenderer(render) {
  renderCurrent = render;
}

/** A message shown once at the top of the next rendered view. */
export function flash(text) {
  flashText = text;
}

/** The pending flash message, handed out once. */
export function takeFlash() {
  const text = flashText;
  flashText = undefined;
  return text;
}

export function navigate(hash) {
  if (location.hash === hash) renderCurrent();
  else location.hash = hash;
}

/** Renders the current route again (after an action changed what it shows). */
export function rerender() {
  renderCurrent();
}
