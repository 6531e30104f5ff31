// @ts-check
// Plugins list and the plugin review page.
import { get, post } from './api.js';
import { flash, rerender } from './router.js';
import { badge, busy, errorBox, field, formatTime, h, nextId, table, when } from './dom.js';
import { can, currentUser, needsRole } from './session.js';

/** @import { ViewContext } from './router.js' */
/** @import { Me } from './session.js' */
/** @import { AnswerOf } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'showPlugin'>} Plugin the review page's plugin detail */

const CONFIRM_CHARS = 12;

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context
 */
export async function pluginsView(container, { signal }) {
  const errors = errorBox('plugins-error');
  const refresh = h('button', { type: 'button', testid: 'plugins-refresh' }, 'Refresh from disk');
  refresh.addEventListener('click', () =>
    busy(refresh, errors, async () => {
      await post('/plugins/refresh');
      flash('Plugin packages re-read from disk; fingerprints recomputed.');
      rerender();
    }),
  );
  const user = await currentUser(signal);
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Plugins'), can(user, 'admin') ? refresh : null),
    h(
      'p',
      { class: 'lede' },
      'Installed plugin packages. Open one to review its fingerprint and scopes before trusting or enabling it.',
    ),
    errors.el,
  );
  /** @type {AnswerOf<'listPlugins'>} */
  const plugins = await get('/plugins', signal);
  container.append(
    table(
      ['Plugin', 'Version', 'Trust', 'Enabled', 'Health', 'Package'],
      plugins.map((p) => [
        h(
          'a',
          { href: `#/plugins/${encodeURIComponent(p.id)}`, testid: `plugin-link-${p.id}` },
          p.name,
          h('span', { class: 'sub' }, p.id),
        ),
        p.version,
        badge(p.trust),
        badge(p.enabled ? 'enabled' : 'disabled'),
        badge(p.health),
        p.available ? badge('available') : h('span', {}, badge('unavailable'), ' ', p.error ?? ''),
      ]),
      { testid: 'plugins-table', class: 'data' },
    ),
  );
}

/** 64 hex characters as 8 groups of 8; the groups are spans, so a copy gives the plain 64 characters. */
/**
 * @param {string} fingerprint
 * @param {string} testid
 */
function fingerprintBlock(fingerprint, testid) {
  const groups = fingerprint.match(/.{1,8}/g) ?? [fingerprint];
  return h(
    'code',
    { class: 'fingerprint', testid, 'aria-label': `SHA-256 fingerprint ${fingerprint}` },
    groups.map((group) => h('span', { class: 'fp-group' }, group)),
  );
}

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context `params`: the plugin id
 */
export async function pluginView(container, { signal, params: [id] }) {
  /** @type {[Plugin, Me]} */
  const [plugin, user] = await Promise.all([
    get(`/plugins/${encodeURIComponent(/** @type {string} */ (id))}`, signal),
    currentUser(signal),
  ]);
  const descriptions = plugin.scopeDescriptions ?? {};
  /** @param {string} scope */
  const describe = (scope) => descriptions[scope] ?? 'No description known for this scope.';

  // ---- the top panel: fingerprint, trust boundary, trust action -------------------------------
  const head = h(
    'div',
    { class: 'page-head' },
    h(
      'h1',
      {},
      'Review: ',
      h('span', { testid: 'plugin-name' }, plugin.name),
      ' ',
      // Apart, so each is isolated (dom.js): a version cannot reorder the id.
      h('span', { class: 'sub' }, plugin.id, ' ', plugin.version),
    ),
    h(
      'div',
      { class: 'badges' },
      badge(plugin.trust, 'plugin-trust'),
      badge(plugin.enabled ? 'enabled' : 'disabled', 'plugin-enabled'),
      badge(plugin.health, 'plugin-health'),
    ),
  );

  const changed =
    plugin.trust === 'changed'
      ? h(
          'div',
          { class: 'alert alert-bad', role: 'alert', testid: 'changed-warning' },
          h('strong', {}, 'This package changed since it was reviewed. '),
          'It has been disabled and its grants revoked; it must be reviewed again before it can be trusted or enabled.',
          h(
            'dl',
            { class: 'fp-compare' },
            h('dt', {}, 'Reviewed fingerprint (trusted)'),
            h(
              'dd',
              {},
              plugin.trustedFingerprint
                ? fingerprintBlock(plugin.trustedFingerprint, 'trusted-fingerprint')
                : '—',
            ),
            h('dt', {}, 'Current fingerprint (not reviewed)'),
            h(
              'dd',
              {},
              plugin.fingerprint ? fingerprintBlock(plugin.fingerprint, 'current-fingerprint') : '—',
            ),
          ),
        )
      : null;

  const fingerprintPart = plugin.fingerprint
    ? fingerprintBlock(plugin.fingerprint, 'fingerprint')
    : h(
        'p',
        { class: 'alert alert-bad', testid: 'fingerprint' },
        `No fingerprint: the package is unavailable${plugin.error ? ` (${plugin.error})` : ''}.`,
      );

  const boundary = h(
    'div',
    { class: 'alert alert-warn trust-boundary', role: 'note', testid: 'trust-boundary' },
    h('strong', { class: 'alert-title' }, 'Operating-system trust boundary'),
    h('p', { testid: 'trust-boundary-text' }, plugin.osTrustBoundary ?? ''),
  );

  const reviewPanel = h(
    'section',
    { class: 'review-panel', 'aria-labelledby': 'review-title', testid: 'review-panel' },
    h('h2', { id: 'review-title', class: 'visually-hidden' }, 'What you are trusting'),
    h(
      'div',
      { class: 'review-fp' },
      h('h3', {}, 'Package fingerprint (SHA-256)'),
      fingerprintPart,
      h(
        'p',
        { class: 'hint' },
        'Compare this with the fingerprint the plugin author published (CLI: switchyard plugin show ',
        plugin.id,
        ').',
      ),
      trustForm(plugin, user),
    ),
    boundary,
  );

  const fleetLink = h(
    'p',
    {},
    h(
      'a',
      { href: `#/plugins/${encodeURIComponent(plugin.id)}/fleet`, testid: 'plugin-fleet-link' },
      'Fleet: facts across projects, and the trend of its batches →',
    ),
  );
  container.append(...[head, fleetLink, changed, reviewPanel].filter((el) => el !== null));

  // ---- details -----------------------------------------------------------------------------
  const granted = new Set(plugin.grantedScopes ?? []);
  container.append(
    h(
      'div',
      { class: 'grid-2' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'pkg-title' },
        h('h2', { id: 'pkg-title' }, 'Package'),
        h(
          'dl',
          { class: 'facts', testid: 'plugin-facts' },
          dt('Name', plugin.name),
          dt('Id', plugin.id),
          dt('Version', plugin.version),
          dt('Protocol', plugin.protocolVersion, 'plugin-protocol'),
          dt('Capabilities', (plugin.capabilities ?? []).join(', ') || '—', 'plugin-capabilities'),
          dt('Executable', plugin.executable),
          dt('Package directory', plugin.packageDir),
          dt('Package digest (every file)', plugin.treeDigest ?? '—', 'plugin-tree-digest'),
          dt(
            'Trusted by',
            plugin.trustedBy ? h('span', {}, `${plugin.trustedBy}, `, when(plugin.trustedAt)) : '—',
          ),
          dt('Time limits', limitsText(plugin.timeLimits), 'plugin-time-limits'),
          dt('Network', `${plugin.policy.network} — ${plugin.policy.networkReason}`, 'plugin-network'),
          dt(
            'Extra paths',
            `read: ${plugin.policy.allowRead.join(', ') || 'none'}; write: ${plugin.policy.allowWrite.join(', ') || 'none'}`,
            'plugin-extra-paths',
          ),
          dt('Resource limits per call', resourceText(plugin.policy.limits), 'plugin-resource-limits'),
          dt(
            `Containment (as seen by ${plugin.containment?.seenBy ?? 'the api'})`,
            plugin.containment ? `${plugin.containment.mechanism}: ${plugin.containment.detail}` : '—',
            'plugin-containment',
          ),
          dt('Enforced on worker hosts', enforcementList(plugin), 'plugin-enforcement'),
        ),
      ),
      healthCard(plugin, user),
    ),
    packageFilesCard(plugin),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'scopes-title' },
      h('h2', { id: 'scopes-title' }, 'Requested scopes'),
      table(
        ['Scope', 'What it lets the plugin do', 'Granted'],
        (plugin.requestedScopes ?? []).map((scope) => [
          h('code', {}, scope),
          describe(scope),
          granted.has(scope) ? badge('granted') : h('span', { class: 'muted' }, 'not granted'),
        ]),
        { testid: 'requested-scopes', class: 'data' },
      ),
      h('p', {}, 'Granted now: ', h('span', { testid: 'granted-scopes' }, [...granted].join(', ') || 'none')),
    ),
    h('div', { class: 'grid-2' }, enableCard(plugin, describe, user), disableCard(plugin, user)),
    logsCard(plugin, signal),
  );
}

/** @param {number} ms */
function durationText(ms) {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** The host's time limits for this plugin's calls (an admin sets them: switchyard plugin set). */
/** @param {Plugin['timeLimits'] | undefined} limits */
function limitsText(limits) {
  if (!limits) return '—';
  const d = durationText;
  return `inspect ${d(limits.inspectMs)}, operate ${d(limits.operateMs)}, health ${d(limits.healthMs)}`;
}

/** @param {Plugin['policy']['limits']} limits */
function resourceText(limits) {
  /** @param {number} bytes */
  const size = (bytes) =>
    bytes % 1024 ** 3 === 0 ? `${bytes / 1024 ** 3} GiB` : `${Math.round(bytes / 1024 ** 2)} MiB`;
  return (
    `memory ${size(limits.memoryBytes)}, CPU ${durationText(limits.cpuMs)}, file size ${size(limits.fileSizeBytes)}, ` +
    `open files ${limits.openFiles}, processes ${limits.processes}, disk ${size(limits.diskBytes)}`
  );
}

/**
 * Each worker's own report: what its host enforces and what is missing (the review's OS boundary, exactly).
 * @param {Plugin} plugin
 */
function enforcementList(plugin) {
  const workers = plugin.containment?.workers ?? [];
  if (workers.length === 0) return h('span', { class: 'muted' }, 'no running worker has reported yet');
  return h(
    'ul',
    {},
    ...workers.map((worker) =>
      h(
        'li',
        {},
        h('code', {}, worker.worker),
        worker.required ? ' (requires all of it)' : '',
        h('div', {}, `enforced: ${worker.enforced.join('; ') || 'nothing'}`),
        h(
          'div',
          { class: worker.missing.length > 0 ? 'warn' : 'muted' },
          `not enforced: ${worker.missing.join('; ') || 'nothing'}`,
        ),
      ),
    ),
  );
}

/**
 * @param {string} term
 * @param {import('./dom.js').Child} value
 * @param {string} [testid]
 */
function dt(term, value, testid) {
  return [h('dt', {}, term), h('dd', { testid }, value ?? '—')];
}

/**
 * @param {Plugin} plugin
 * @param {Me} user
 */
function trustForm(plugin, user) {
  const errors = errorBox('trust-error');
  if (!plugin.fingerprint)
    return h('p', { class: 'muted' }, 'Nothing to trust until the package is readable.');
  if (plugin.trust === 'trusted') {
    return h(
      'p',
      { class: 'ok-line', testid: 'trust-done' },
      'This exact fingerprint is trusted',
      plugin.trustedBy ? ` (by ${plugin.trustedBy}, ${formatTime(plugin.trustedAt)})` : '',
      '.',
    );
  }
  // Trusting is for admins (the api refuses others): no form the token could not submit.
  if (!can(user, 'admin')) return needsRole(user, 'admin', 'Trusting a fingerprint', 'trust-needs-role');
  const expected = plugin.fingerprint.slice(0, CONFIRM_CHARS).toLowerCase();
  const input = h('input', {
    type: 'text',
    class: 'mono',
    autocomplete: 'off',
    spellcheck: 'false',
    maxlength: '80',
    testid: 'trust-confirm',
  });
  const button = h(
    'button',
    { type: 'submit', class: 'primary', disabled: true, testid: 'trust-button' },
    'Trust this fingerprint',
  );
  const matches = () => input.value.replace(/\s+/g, '').toLowerCase().slice(0, CONFIRM_CHARS) === expected;
  input.addEventListener('input', () => {
    button.disabled = !matches();
  });
  const form = h(
    'form',
    { class: 'trust-form', testid: 'trust-form' },
    field(
      `Confirm: type or paste the first ${CONFIRM_CHARS} characters of the fingerprint above`,
      input,
      'Trust records this exact fingerprint and leaves the plugin disabled; enabling is a separate step.',
    ),
    h('div', { class: 'actions' }, button),
    errors.el,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!matches()) return;
    void busy(button, errors, async () => {
      await post(`/plugins/${encodeURIComponent(plugin.id)}/trust`, { fingerprint: plugin.fingerprint });
      flash(
        `Trusted ${plugin.id} with fingerprint ${plugin.fingerprint}. It stays disabled until you enable it.`,
      );
      rerender();
    });
  });
  return form;
}

/**
 * @param {Plugin} plugin
 * @param {(scope: string) => string} describe
 * @param {Me} user
 */
function enableCard(plugin, describe, user) {
  const errors = errorBox('enable-error');
  const admin = can(user, 'admin');
  const trusted = plugin.trust === 'trusted';
  const button = h(
    'button',
    { type: 'submit', class: 'primary', disabled: true, testid: 'enable-button' },
    plugin.enabled ? 'Enable with these scopes' : 'Enable',
  );
  // An enabled plugin's form starts from what it holds now, so changing one scope
  // does not silently drop the others; a plugin never enabled starts from none.
  const granted = new Set(plugin.enabled ? (plugin.grantedScopes ?? []) : []);
  const boxes = (plugin.requestedScopes ?? []).map((scope) => {
    const id = nextId('scope');
    const input = h('input', {
      type: 'checkbox',
      id,
      value: scope,
      checked: granted.has(scope),
      disabled: !trusted || !admin,
      testid: `enable-scope-${scope}`,
    });
    return {
      input,
      el: h(
        'div',
        { class: 'check' },
        input,
        h('label', { for: id }, h('code', {}, scope), h('span', { class: 'hint' }, describe(scope))),
      ),
    };
  });
  const update = () => {
    button.disabled = !trusted || !admin || !boxes.some((box) => box.input.checked);
  };
  for (const box of boxes) box.input.addEventListener('change', update);
  update();
  const form = h(
    'form',
    { testid: 'enable-form' },
    h(
      'fieldset',
      {},
      h(
        'legend',
        {},
        granted.size > 0
          ? 'Grant scopes (the ones granted now are checked)'
          : 'Grant scopes (none are pre-selected)',
      ),
      boxes.map((box) => box.el),
    ),
    !admin
      ? needsRole(user, 'admin', 'Enabling', 'enable-needs-role')
      : trusted
        ? null
        : h(
            'p',
            { class: 'notice' },
            'Trust the current fingerprint first; enabling needs a trusted plugin.',
          ),
    h('div', { class: 'actions' }, button),
    errors.el,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const scopes = boxes.filter((box) => box.input.checked).map((box) => box.input.value);
    if (scopes.length === 0) return;
    void busy(button, errors, async () => {
      await post(`/plugins/${encodeURIComponent(plugin.id)}/enable`, { scopes });
      flash(
        `Enabled ${plugin.id} with ${scopes.join(', ')} after a successful initialize and health exchange.`,
      );
      rerender();
    });
  });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'enable-title' },
    h('h2', { id: 'enable-title' }, 'Enable'),
    h(
      'p',
      { class: 'hint' },
      'Enabling starts the plugin once with exactly these grants; it is enabled only if it answers health.',
    ),
    form,
  );
}

/**
 * @param {Plugin} plugin
 * @param {Me} user
 */
function disableCard(plugin, user) {
  const errors = errorBox('disable-error');
  const admin = can(user, 'admin');
  const button = h(
    'button',
    { type: 'button', class: 'danger', disabled: !plugin.enabled || !admin, testid: 'disable-button' },
    'Disable',
  );
  button.addEventListener('click', () =>
    busy(button, errors, async () => {
      await post(`/plugins/${encodeURIComponent(plugin.id)}/disable`);
      flash(`Disabled ${plugin.id}; every grant was revoked.`);
      rerender();
    }),
  );
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'disable-title' },
    h('h2', { id: 'disable-title' }, 'Disable'),
    h('p', { class: 'hint' }, 'Revokes every grant without running plugin code. Trust is kept.'),
    admin ? null : needsRole(user, 'admin', 'Disabling', 'disable-needs-role'),
    h('div', { class: 'actions' }, button),
    errors.el,
  );
}

/**
 * @param {Plugin} plugin
 * @param {Me} user
 */
function healthCard(plugin, user) {
  const errors = errorBox('health-error');
  const operator = can(user, 'operator');
  const button = h(
    'button',
    { type: 'button', testid: 'health-button', disabled: !plugin.enabled || !operator },
    'Check health now',
  );
  const result = h('p', { role: 'status', testid: 'health-result' });
  button.addEventListener('click', () =>
    busy(button, errors, async () => {
      /** @type {AnswerOf<'checkPluginHealth'>} */
      const answer = await post(`/plugins/${encodeURIComponent(plugin.id)}/health`);
      result.replaceChildren(
        badge(answer.status),
        ' ',
        answer.message ?? '',
        ` (${formatTime(answer.checkedAt)})`,
      );
    }),
  );
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'health-title' },
    h('h2', { id: 'health-title' }, 'Health'),
    h(
      'dl',
      { class: 'facts' },
      dt('Health', badge(plugin.health)),
      dt('Checked', when(plugin.healthCheckedAt)),
      dt(
        'Last error',
        plugin.lastError
          ? h('span', { class: 'error-text', testid: 'last-error' }, plugin.lastError)
          : 'none',
      ),
    ),
    operator ? null : needsRole(user, 'operator', 'A health check', 'health-needs-role'),
    h('div', { class: 'actions' }, button),
    result,
    errors.el,
  );
}

/**
 * @param {Plugin} plugin
 * @param {AbortSignal} signal
 */
function logsCard(plugin, signal) {
  const body = h('div', { testid: 'plugin-logs' }, h('p', { class: 'muted' }, 'Loading…'));
  get(`/plugins/${encodeURIComponent(plugin.id)}/logs?limit=100`, signal)
    .then((/** @type {AnswerOf<'pluginLogs'>} */ entries) => {
      body.replaceChildren(
        entries.length === 0
          ? h('p', { class: 'muted' }, 'No log lines recorded.')
          : h(
              'ol',
              { class: 'log' },
              entries.map((e) =>
                h('li', {}, h('span', { class: 'log-meta' }, when(e.at), ` ${e.source}`), ' ', e.line),
              ),
            ),
      );
    })
    .catch((thrown) => {
      const error = /** @type {{ name?: string, signedOut?: boolean } | null | undefined} */ (thrown);
      if (error?.name === 'AbortError' || error?.signedOut) return;
      const box = errorBox('logs-error');
      box.show(error);
      body.replaceChildren(box.el);
    });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'logs-title' },
    h('h2', { id: 'logs-title' }, 'Recent logs'),
    body,
  );
}

/**
 * Every file of the package: trusting approves all of them, not only the executable.
 * @param {any} plugin
 */
function packageFilesCard(plugin) {
  const files = plugin.files ?? [];
  const changed = new Set(plugin.changedFiles ?? []);
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'files-title' },
    h('h2', { id: 'files-title' }, `Package files (${files.length})`),
    h(
      'p',
      { class: 'hint' },
      `Trusting approves every one of these files; a change to any of them disables the plugin. At most ${plugin.packageLimits?.entries ?? '?'} entries per package.`,
    ),
    table(
      ['Path', 'Mode', 'Size', ''],
      files.map((/** @type {any} */ file) => [
        h(
          'code',
          {},
          file.type === 'directory'
            ? `${file.path}/`
            : file.type === 'symlink'
              ? `${file.path} -> ${file.target ?? '?'}`
              : file.path,
        ),
        file.mode,
        file.type === 'file' ? String(file.size) : '—',
        changed.has(file.path) ? badge('changed') : '',
      ]),
      { testid: 'package-files', class: 'data' },
    ),
  );
}
