// @ts-check
// Tiny DOM helpers. Every string goes in as text (never parsed as HTML):
// plugin-provided names, errors, facts and logs are untrusted; and bidi-
// isolated, so none can reorder what stands beside it.

/**
 * An element index.html has (the shell's main, nav, sign-out): a missing one is
 * a broken page, said by name.
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`index.html has no element #${id}`);
  return el;
}

/** @typedef {Node | string | number | null | undefined | false} Leaf a node, text, or nothing (skipped) */
/**
 * A child h() and append() take: a leaf or a list of them, two deep (a JSDoc
 * type cannot refer to itself; append() itself flattens any depth).
 * @typedef {Leaf | (Leaf | Leaf[])[]} Child
 */

/**
 * h('button', { class: 'primary', testid: 'x', onclick: fn, disabled: true }, 'Label', child, [more])
 * Attributes: class, text, testid (→ data-testid), on<event> handlers, booleans
 * (true sets, false/null/undefined skips), anything else via setAttribute.
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {Child[]} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    // value/checked/selected are properties of the form controls only; set as before on whatever tag was given
    const control = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (el));
    if (key === 'class') el.className = /** @type {string} */ (value);
    else if (key === 'text') el.replaceChildren(isolated(el, String(value)));
    else if (key === 'testid') el.dataset.testid = /** @type {string} */ (value);
    else if (key.startsWith('on') && typeof value === 'function')
      el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else if (key === 'value') control.value = value;
    else if (key === 'checked' || key === 'selected') control[key] = Boolean(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/**
 * @param {HTMLElement} el
 * @param {unknown[]} children Child values, nested to any depth
 */
function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (typeof child === 'string' || typeof child === 'number') el.append(isolated(el, String(child)));
    else el.append(/** @type {Node} */ (child));
  }
}

/** Elements whose content is text only: a <bdi> in them would not render; isolatedText() serves them. */
const TEXT_ONLY = new Set(['OPTION', 'TEXTAREA', 'TITLE', 'STYLE', 'SCRIPT']);
/** Only a character outside printable ASCII can be right-to-left or a bidi control. */
const NOT_ASCII = /[^\u0020-\u007e\t\n\r]/;

/**
 * A text as a child of `el`: in a <bdi> (unicode-bidi: isolate) when it could
 * be right-to-left or hold a bidi control, so a plugin's or a project's name
 * with U+202E in it never reverses the id and version shown beside it.
 * @param {HTMLElement} el
 * @param {string} text
 * @returns {Node | string}
 */
function isolated(el, text) {
  if (!NOT_ASCII.test(text) || TEXT_ONLY.has(el.tagName)) return text;
  const bdi = document.createElement('bdi');
  bdi.textContent = text;
  return bdi;
}

/**
 * A plugin's or a project's string for a place that takes text only (an
 * <option>, a string built around it): between FIRST STRONG ISOLATE and POP
 * DIRECTIONAL ISOLATE, its own isolate controls made U+FFFD so none can close
 * the isolate early, so nothing in it moves the text around it.
 * @param {string} text
 */
export function isolatedText(text) {
  const value = String(text);
  if (!NOT_ASCII.test(value)) return value;
  return `\u2068${value.replace(/[\u2066-\u2069]/g, '\ufffd')}\u2069`;
}

let uid = 0;
/**
 * A unique id for label/for pairs.
 * @param {string} prefix
 */
export function nextId(prefix) {
  uid += 1;
  return `${prefix}-${uid}`;
}

/**
 * A labelled form field: <div class="field"><label for>…</label>control hint</div>.
 * @param {Child} label
 * @param {HTMLElement} control
 * @param {Child} [hint]
 */
export function field(label, control, hint) {
  if (!control.id) control.id = nextId('f');
  const hintEl = hint ? h('p', { class: 'hint', id: `${control.id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintEl);
}

/** @type {Record<string, string>} */
const TONES = {
  trusted: 'ok',
  untrusted: 'neutral',
  changed: 'bad',
  enabled: 'ok',
  disabled: 'neutral',
  healthy: 'ok',
  degraded: 'warn',
  unhealthy: 'bad',
  unknown: 'neutral',
  succeeded: 'ok',
  delivered: 'ok',
  retrying: 'warn',
  pending: 'info',
  dropped: 'neutral',
  active: 'ok',
  inactive: 'neutral',
  partially_succeeded: 'warn',
  failed: 'bad',
  // A failed operation whose plugin may have acted: a person must look (warn, not plain failed).
  outcome_unknown: 'warn',
  cancelled: 'neutral',
  queued: 'info',
  running: 'info',
  finished: 'ok',
  // Rollouts (and their waves and projects): waiting on a person is a warning.
  'awaiting-approval': 'warn',
  paused: 'warn',
  previewing: 'info',
  starting: 'info',
  done: 'ok',
  available: 'ok',
  unavailable: 'bad',
  granted: 'ok',
  'not trusted': 'neutral',
  'root missing': 'bad',
};
/** @type {Record<string, string>} */
const MARKS = { ok: '✓', bad: '✕', warn: '!', info: '…', neutral: '○' };

/**
 * A status badge: a mark, the word, and a color (never color alone).
 * @param {string} word
 * @param {string} [testid]
 */
export function badge(word, testid) {
  const tone = TONES[word] ?? 'neutral';
  return h(
    'span',
    { class: `badge badge-${tone}`, testid },
    h('span', { class: 'badge-mark', 'aria-hidden': 'true' }, MARKS[tone]),
    ` ${String(word).replaceAll('_', ' ')}`,
  );
}

/** @param {string | number | Date | null | undefined} value an ISO date, epoch ms (also as digits) or nothing */
export function formatTime(value) {
  if (value === undefined || value === null || value === '') return '—';
  const date = new Date(typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}

/**
 * A time as people read it, in this browser's time zone, with the exact ISO
 * time in its title (hover) and datetime attribute; '—' for nothing.
 * @param {string | number | Date | null | undefined} value as formatTime takes it
 */
export function when(value) {
  const text = formatTime(value);
  if (text === '—') return h('span', { class: 'muted' }, text);
  const date = new Date(
    typeof value === 'string' && /^\d+$/.test(value)
      ? Number(value)
      : /** @type {string | number | Date} */ (value),
  );
  if (Number.isNaN(date.getTime())) return h('span', {}, text);
  const iso = date.toISOString();
  return h('time', { datetime: iso, title: iso, class: 'nowrap' }, text);
}

/**
 * A duration the way the CLI prints it (the `ms` package's short form): the
 * largest unit that fits, rounded — 1h, 6h, 1d, 90s → 2m, 999ms.
 *
 * @param {number} ms
 */
export function formatDuration(ms) {
  /** @type {[string, number][]} */
  const units = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ];
  for (const [unit, size] of units) if (Math.abs(ms) >= size) return `${Math.round(ms / size)}${unit}`;
  return `${ms}ms`;
}

/**
 * A table with a header row; rows are arrays of cells (nodes or strings), or ready rows.
 * @param {string[]} headers
 * @param {(Child[] | HTMLTableRowElement)[]} rows
 * @param {Record<string, unknown>} [attrs]
 */
export function table(headers, rows, attrs = {}) {
  return h(
    'table',
    attrs,
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headers.map((title) => h('th', { scope: 'col' }, title)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.length === 0
        ? h('tr', {}, h('td', { colspan: String(headers.length), class: 'empty' }, 'Nothing yet.'))
        : rows.map((cells) =>
            Array.isArray(cells)
              ? h(
                  'tr',
                  {},
                  cells.map((c) => h('td', {}, c)),
                )
              : cells,
          ),
    ),
  );
}

/**
 * A table that stacks on a phone (app.css `table.data.stack`): each cell
 * carries its column's name, shown beside it when the header row is hidden.
 * @param {string[]} headers
 * @param {(Child[] | HTMLTableRowElement)[]} rows
 * @param {Record<string, unknown>} [attrs]
 */
export function stackedTable(headers, rows, attrs = {}) {
  const el = table(headers, rows, { ...attrs, class: `data stack ${attrs.class ?? ''}`.trim() });
  for (const row of el.tBodies[0]?.rows ?? [])
    [...row.cells].forEach((cell, index) => {
      if (!cell.classList.contains('empty')) cell.dataset.label = headers[index] ?? '';
    });
  return el;
}

/**
 * What errorBox.show() reads from an error: an ApiError's fields, or an Error's message.
 * @typedef {{
 *   status?: number,
 *   title?: string,
 *   detail?: string,
 *   message?: string,
 *   name?: string,
 *   signedOut?: boolean,
 *   errors?: { field: string, message: string }[],
 * }} ShownError
 */

/**
 * @typedef {{ el: HTMLDivElement, show(error: unknown): void, clear(): void }} ErrorBox
 */

/**
 * An area for action errors; show(err) fills it, clear() empties it.
 * @param {string} testid
 * @returns {ErrorBox}
 */
export function errorBox(testid) {
  const box = h('div', { class: 'error-box', role: 'alert', testid, hidden: true });
  return {
    el: box,
    show(thrown) {
      // anything can be thrown; read the fields an ApiError or Error has, when there
      const error = /** @type {ShownError | null | undefined} */ (thrown);
      box.replaceChildren();
      const detail = error?.detail ?? error?.message ?? String(error);
      box.append(
        h('strong', {}, error?.status ? `${error.status} ${error.title ?? 'Error'}: ` : 'Error: '),
        detail,
      );
      if (Array.isArray(error?.errors) && error.errors.length > 0) {
        box.append(
          h(
            'ul',
            {},
            error.errors.map((e) => h('li', {}, `${e.field}: ${e.message}`)),
          ),
        );
      }
      box.hidden = false;
    },
    clear() {
      box.replaceChildren();
      box.hidden = true;
    },
  };
}

/**
 * Runs an async action with the button busy; errors go to the box.
 * @template T
 * @param {HTMLButtonElement} button
 * @param {ErrorBox | null | undefined} box
 * @param {() => Promise<T>} action
 * @returns {Promise<T | undefined>}
 */
export async function busy(button, box, action) {
  box?.clear();
  const label = button.textContent;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await action();
  } catch (thrown) {
    const error = /** @type {ShownError | null | undefined} */ (thrown);
    if (error?.name !== 'AbortError' && !error?.signedOut) box?.show(error);
    return undefined;
  } finally {
    button.removeAttribute('aria-busy');
    button.disabled = false;
    button.textContent = label;
  }
}

/** @param {unknown} value */
export function pretty(value) {
  return JSON.stringify(value, null, 2);
}
