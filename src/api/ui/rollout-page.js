// @ts-check
// One rollout (GET /api/v1/rollouts/:id and its /projects): its state and
// why it paused, the plan, the selection with what was skipped and why, the
// counts as a bar, each wave as a bar, then the projects, failures first,
// each linked to its operation. Approve (an admin other than its creator,
// with the action's risk and what approving lets the plugin do), Pause,
// Resume, Cancel and Retry failed, each confirmed first; Export as JSON lines
// or CSV. Read again every 1.5 s until the rollout ends (there is no event
// stream for rollouts).
import { download, get, post } from './api.js';
import { confirmDialog } from './confirm.js';
import { badge, busy, errorBox, h, pretty, stackedTable, when } from './dom.js';
import { every } from './live.js';
import { countsBar, countsText, isOver } from './rollout-parts.js';
import { navigate } from './router.js';
import { can, currentUser } from './session.js';

/** @import { ViewContext } from './router.js' */
/** @import { AnswerOf } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'getRollout'>} Rollout */
/** @typedef {AnswerOf<'rolloutProjects'>['items'][number]} RolloutProject */

const REFRESH_MS = 1500;
const PROJECTS_PAGE = 100;
/** Failures first, then what is under way, then the rest: the order of the projects table. */
const PROJECT_ORDER = /** @type {const} */ ([
  'failed',
  'outcome_unknown',
  'cancelled',
  'running',
  'starting',
  'pending',
  'succeeded',
]);

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context `params`: the rollout id
 */
export async function rolloutView(container, { signal, params: [id] }) {
  const path = `/rollouts/${encodeURIComponent(/** @type {string} */ (id))}`;
  const title = h('span', { testid: 'rollout-name' });
  const state = h('span', { testid: 'rollout-state' });
  const errors = errorBox('rollout-action-error');
  const status = h('div', { testid: 'rollout-status' });
  const details = h('dl', { class: 'facts', testid: 'rollout-details' });
  const progressLabel = h('p', {
    class: 'progress-label',
    id: 'rollout-progress-label',
    testid: 'rollout-counts',
  });
  const bar = countsBar('rollout-progress', 'rollout-progress-label');
  const approveNote = h('div', { testid: 'rollout-approve-note', hidden: true });
  /** @param {string} testid @param {string} text @param {string} [tone] */
  const button = (testid, text, tone) =>
    h('button', { type: 'button', class: tone, testid, hidden: true }, text);
  const approve = button('rollout-approve', 'Approve…', 'primary');
  const pause = button('rollout-pause', 'Pause…');
  const resume = button('rollout-resume', 'Resume…');
  const cancel = button('rollout-cancel', 'Cancel rollout…', 'danger');
  const retry = button('rollout-retry', 'Retry failed…');
  const exportJsonl = h('button', { type: 'button', testid: 'rollout-export-jsonl' }, 'Export JSON lines');
  const exportCsv = h('button', { type: 'button', testid: 'rollout-export-csv' }, 'Export CSV');
  const confirm = confirmDialog('rollout-confirm');
  const selection = h('div', { testid: 'rollout-selection' });
  const waves = h('div', { class: 'waves', testid: 'rollout-waves' });
  const stateFilter = h(
    'select',
    { id: 'rollout-projects-state', testid: 'rollout-projects-state' },
    h('option', { value: '' }, 'all, failures first'),
    PROJECT_ORDER.map((s) => h('option', { value: s }, s.replace('_', ' '))),
  );
  const projectsBox = h('div', { testid: 'rollout-projects' });
  const more = h(
    'button',
    { type: 'button', testid: 'rollout-projects-more', hidden: true },
    'More projects',
  );
  const refreshNote = h('p', { class: 'hint', role: 'status', testid: 'rollout-refresh-note' });

  const loading = h('p', { class: 'muted', testid: 'rollout-loading' }, 'Loading…');
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Rollout ', title), state),
    h('p', {}, h('a', { href: '#/rollouts' }, '← All rollouts')),
    loading,
  );

  // The rollout first: an unknown id leaves only the error the shell shows.
  /** @type {[Rollout, import('./session.js').Me]} */
  let [rollout, user] = await Promise.all([get(path, signal), currentUser(signal)]).finally(() =>
    loading.remove(),
  );
  /** @type {AnswerOf<'showPlugin'> | undefined} its grants and the OS boundary, for the approval */
  const plugin = await get(`/plugins/${encodeURIComponent(rollout.pluginId)}`, signal).catch(() => undefined);
  const operator = can(user, 'operator');
  const me = `token:${user.name}`;
  let shownProjects = PROJECTS_PAGE;
  let reads = 0;

  container.append(
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'rollout-progress-label', testid: 'rollout-summary' },
      status,
      progressLabel,
      bar.el,
      h('div', { class: 'actions' }, approve, pause, resume, cancel, retry, exportJsonl, exportCsv),
      approveNote,
      errors.el,
      refreshNote,
      confirm.el,
    ),
    h(
      'div',
      { class: 'grid-2' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'rollout-plan-title' },
        h('h2', { id: 'rollout-plan-title' }, 'Plan'),
        details,
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'rollout-selection-title' },
        h('h2', { id: 'rollout-selection-title' }, 'Selection'),
        selection,
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'rollout-waves-title' },
      h('h2', { id: 'rollout-waves-title' }, 'Waves'),
      waves,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'rollout-projects-title' },
      h(
        'div',
        { class: 'page-head' },
        h('h2', { id: 'rollout-projects-title' }, 'Projects'),
        h(
          'div',
          { class: 'inline-field' },
          h('label', { for: 'rollout-projects-state' }, 'Show'),
          stateFilter,
        ),
      ),
      projectsBox,
      h('div', { class: 'actions' }, more),
    ),
  );

  /** What the rollout is waiting for, or why it stopped: above everything else. */
  const showStatus = () => {
    const parts = [];
    if (rollout.state === 'awaiting-approval')
      parts.push(
        h(
          'p',
          { class: 'alert alert-warn', role: 'note', testid: 'rollout-awaiting' },
          `Waiting for approval: ${rollout.action} has risk ${rollout.risk}. An admin other than ${rollout.createdBy} approves it before anything runs.`,
        ),
      );
    if (rollout.state === 'paused')
      parts.push(
        h(
          'p',
          { class: 'alert alert-warn', role: 'note', testid: 'rollout-paused-reason' },
          h('strong', {}, 'Paused: '),
          rollout.pausedReason ?? 'no reason given',
        ),
      );
    status.replaceChildren(...parts);
  };

  const showDetails = () => {
    /** @type {[string, Node | string, string][]} */
    const rows = [
      [
        'Plugin',
        h(
          'a',
          { href: `#/plugins/${encodeURIComponent(rollout.pluginId)}` },
          h('code', {}, rollout.pluginId),
        ),
        'plugin',
      ],
      ['Action', h('code', {}, rollout.action), 'action'],
      ['Risk', rollout.risk, 'risk'],
      ['Input (redacted)', h('pre', { class: 'json wrap' }, pretty(rollout.input ?? {})), 'input-shown'],
      ['Created', h('span', {}, when(rollout.createdAt), ` by ${rollout.createdBy}`), 'created'],
    ];
    if (rollout.approvedBy) rows.push(['Approved by', rollout.approvedBy, 'approved-by']);
    if (rollout.startedAt) rows.push(['Started', when(rollout.startedAt), 'started']);
    if (rollout.finishedAt) rows.push(['Finished', when(rollout.finishedAt), 'finished']);
    if (rollout.cancelledBy) rows.push(['Cancelled by', rollout.cancelledBy, 'cancelled-by']);
    if (rollout.retryOf)
      rows.push([
        'Retry of',
        h('a', { href: `#/rollouts/${encodeURIComponent(rollout.retryOf)}` }, h('code', {}, rollout.retryOf)),
        'retry-of',
      ]);
    rows.push(
      [
        'Concurrency',
        `${rollout.concurrency} operation${rollout.concurrency === 1 ? '' : 's'} at once in a wave`,
        'concurrency',
      ],
      [
        'Failures allowed',
        `${rollout.maxFailures} (failed and outcome unknown count; one more pauses it)`,
        'max-failures',
      ],
      ['Between waves', rollout.pauseBetween ? 'pauses until resumed' : 'goes on', 'pause-between'],
      ['Id', h('code', { class: 'id' }, rollout.id), 'id'],
    );
    details.replaceChildren(
      ...rows.flatMap(([term, value, testid]) => [
        h('dt', {}, term),
        h('dd', { testid: `rollout-${testid}` }, value),
      ]),
    );
  };

  const showSelection = () => {
    selection.replaceChildren(
      ...[
        h(
          'p',
          { testid: 'rollout-total' },
          `${rollout.total} project${rollout.total === 1 ? '' : 's'} to run`,
          rollout.skipped.length ? `, ${rollout.skipped.length} skipped` : '',
          '.',
        ),
        h(
          'p',
          {},
          'Chosen by ',
          rollout.selection.length
            ? rollout.selection.flatMap((part, index) => [index ? ' and ' : '', h('code', {}, part)])
            : '—',
          '.',
        ),
        rollout.skipped.length
          ? stackedTable(
              ['Skipped project', 'Why'],
              rollout.skipped.map((entry) => [
                h('code', { class: 'project-id', title: entry.projectId }, entry.projectId),
                entry.reason,
              ]),
              { testid: 'rollout-skipped' },
            )
          : h('p', { class: 'muted' }, 'None skipped.'),
      ],
    );
  };

  // A wave starts only when the one before has ended: the projects ended so far fill the waves in order.
  const showWaves = () => {
    let left =
      rollout.counts.succeeded +
      rollout.counts.failed +
      rollout.counts.cancelled +
      rollout.counts.outcome_unknown;
    waves.replaceChildren(
      ...rollout.waves.map((wave) => {
        const done = Math.min(wave.size, left);
        left -= done;
        const progressId = `rollout-wave-${wave.index}-bar`;
        return h(
          'div',
          { class: 'wave', testid: `rollout-wave-${wave.index}`, 'data-state': wave.state },
          h(
            'div',
            { class: 'wave-head' },
            h(
              'label',
              { for: progressId },
              `Wave ${wave.index}: ${done} of ${wave.size} project${wave.size === 1 ? '' : 's'} ended`,
            ),
            badge(wave.state),
          ),
          h('progress', { id: progressId, max: String(Math.max(1, wave.size)), value: String(done) }),
        );
      }),
    );
  };

  const showButtons = () => {
    const over = isOver(rollout.state);
    const admin = user.role === 'admin';
    const mine = rollout.createdBy === me;
    approve.hidden = !(rollout.state === 'awaiting-approval' && admin && !mine);
    pause.hidden = !(operator && (rollout.state === 'running' || rollout.state === 'awaiting-approval'));
    resume.hidden = !(operator && rollout.state === 'paused');
    cancel.hidden = !(operator && !over);
    retry.hidden = !(operator && over && rollout.counts.failed > 0);
    approveNote.hidden = rollout.state !== 'awaiting-approval';
    if (approveNote.hidden) return;
    approveNote.replaceChildren(
      ...(approve.hidden
        ? [
            h(
              'p',
              { class: 'hint', testid: 'rollout-approve-who' },
              admin && mine
                ? 'You created this rollout: another admin approves it (unless the api runs with SWITCHYARD_ROLLOUT_SELF_APPROVAL=1, then use `switchyard rollout approve`).'
                : `Approving needs the admin role; token ${user.name} has ${user.role}.`,
            ),
          ]
        : approvalConsequences()),
    );
  };

  /** What approving lets happen: the action's risk, the plugin's grants, and where the OS boundary is. */
  const approvalConsequences = () => [
    h(
      'p',
      { testid: 'rollout-approve-risk' },
      'Approving lets ',
      h('code', {}, rollout.pluginId),
      ` run ${rollout.action} (risk: ${rollout.risk}) on ${rollout.total} project${rollout.total === 1 ? '' : 's'}, as operations requested by ${rollout.createdBy}, within its grants: `,
      plugin ? plugin.grantedScopes.join(', ') || 'none' : 'see the plugin’s page',
      '.',
    ),
    h(
      'p',
      { class: 'hint', testid: 'rollout-approve-boundary' },
      'The sandbox of each call is the OS boundary, not the grants alone: ',
      plugin?.osTrustBoundary ?? 'see the plugin’s review page.',
    ),
  ];

  /** @param {RolloutProject} project */
  const projectRow = (project) => {
    const { preview } = project;
    const error = project.errorCode || project.errorMessage;
    return [
      h(
        'a',
        { href: `#/projects/${encodeURIComponent(project.projectId)}` },
        h('code', { class: 'project-id', title: project.projectId }, project.projectId),
      ),
      String(project.wave),
      badge(project.state),
      project.operationId
        ? h(
            'a',
            {
              href: `#/operations/${encodeURIComponent(project.operationId)}`,
              testid: `rollout-op-${project.projectId}`,
            },
            h('code', { class: 'project-id', title: project.operationId }, project.operationId),
          )
        : h('span', { class: 'muted' }, 'not started'),
      h(
        'div',
        { class: 'detail' },
        error
          ? h(
              'span',
              {},
              project.errorMessage ?? '',
              project.errorCode ? h('span', { class: 'sub' }, project.errorCode) : null,
            )
          : null,
        preview
          ? h(
              'div',
              { class: 'sub', testid: `rollout-preview-${project.projectId}` },
              'Preview ',
              preview.operationId
                ? h('a', { href: `#/operations/${encodeURIComponent(preview.operationId)}` }, preview.state)
                : preview.state,
              preview.summary || preview.errorMessage ? `: ${preview.summary ?? preview.errorMessage}` : '',
            )
          : null,
      ),
    ];
  };

  /** The first `shownProjects` projects in the table's order (or of the state picked). */
  const readProjects = async () => {
    const states = stateFilter.value ? [stateFilter.value] : PROJECT_ORDER;
    /** @type {RolloutProject[]} */
    const rows = [];
    let truncated = false;
    for (const projectState of states) {
      /** @type {string | undefined} */
      let cursor;
      do {
        const room = shownProjects - rows.length;
        if (room <= 0) {
          truncated = true;
          break;
        }
        const query = new URLSearchParams({ state: projectState, limit: String(Math.min(room, 500)) });
        if (cursor) query.set('cursor', cursor);
        /** @type {AnswerOf<'rolloutProjects'>} */
        const page = await get(`${path}/projects?${query}`, signal);
        rows.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      if (truncated) break;
    }
    return { rows, truncated };
  };

  /** Reads the rollout and its projects, and shows them (a read overtaken by a newer one is dropped). */
  const refresh = async () => {
    const read = ++reads;
    /** @type {Rollout} */
    const next = await get(path, signal);
    const projects = await readProjects();
    if (read !== reads) return;
    rollout = next;
    show();
    projectsBox.replaceChildren(
      stackedTable(['Project', 'Wave', 'State', 'Operation', 'Error'], projects.rows.map(projectRow), {
        testid: 'rollout-projects-table',
        class: 'results',
      }),
    );
    more.hidden = !projects.truncated;
  };

  const show = () => {
    title.textContent = rollout.name;
    state.replaceChildren(badge(rollout.state));
    state.dataset.state = rollout.state;
    progressLabel.textContent = `${countsText(rollout.counts, rollout.total)}`;
    bar.update(rollout.counts, rollout.total);
    showStatus();
    showDetails();
    showSelection();
    showWaves();
    showButtons();
  };

  /**
   * Asks, then posts, then shows the answer (or the api's problem).
   * @param {HTMLButtonElement} control
   * @param {{ title: string, body: (Node | string)[], confirm: string, danger?: boolean }} question
   * @param {() => Promise<void>} act
   */
  const confirmed = (control, question, act) =>
    control.addEventListener('click', () =>
      confirm.ask(question, () => void busy(control, errors, act).then(() => refresh().catch(() => {}))),
    );
  const projectsWord = () => `${rollout.total} project${rollout.total === 1 ? '' : 's'}`;
  confirmed(
    approve,
    {
      get title() {
        return `Approve rollout ${rollout.name}?`;
      },
      get body() {
        return [...approvalConsequences(), 'The approval is audited under your name.'];
      },
      confirm: 'Approve',
    },
    async () => void (await post(`${path}/approve`)),
  );
  confirmed(
    pause,
    {
      title: 'Pause this rollout?',
      get body() {
        return [`No new operation starts among its ${projectsWord()}; the running ones end. Resume goes on.`];
      },
      confirm: 'Pause',
    },
    async () => void (await post(`${path}/pause`)),
  );
  confirmed(
    resume,
    {
      title: 'Resume this rollout?',
      body: [
        'It goes on where it stopped. A rollout its failure budget paused is resumed by an admin only, and its budget starts again from the failures so far.',
      ],
      confirm: 'Resume',
    },
    async () => void (await post(`${path}/resume`)),
  );
  confirmed(
    cancel,
    {
      title: 'Cancel this rollout?',
      body: [
        'Projects not started never start; running operations are cancelled as an operation’s Cancel does. This cannot be undone.',
      ],
      confirm: 'Cancel rollout',
      danger: true,
    },
    async () => void (await post(`${path}/cancel`)),
  );
  confirmed(
    retry,
    {
      title: 'Retry the failed projects?',
      get body() {
        return [
          `A new rollout of the ${rollout.counts.failed} failed project${rollout.counts.failed === 1 ? '' : 's'}, with the same action, input, concurrency and budget; it needs its own approval as any rollout. Projects whose outcome is unknown are not retried: check them first.`,
        ];
      },
      confirm: 'Create the retry',
    },
    async () => {
      /** @type {AnswerOf<'retryRollout'>} */
      const next = await post(`${path}/retry`, { failed: true });
      navigate(`#/rollouts/${encodeURIComponent(next.id)}`);
    },
  );
  /** @param {HTMLButtonElement} control @param {'jsonl' | 'csv'} format */
  const exporter = (control, format) =>
    control.addEventListener('click', () =>
      busy(control, errors, () =>
        download(`${path}/export?format=${format}`, `rollout-${rollout.id}.${format}`),
      ),
    );
  exporter(exportJsonl, 'jsonl');
  exporter(exportCsv, 'csv');
  stateFilter.addEventListener('change', () => {
    shownProjects = PROJECTS_PAGE;
    void refresh().catch((error) => errors.show(error));
  });
  more.addEventListener('click', () => {
    shownProjects += PROJECTS_PAGE;
    void busy(more, errors, refresh);
  });

  show();
  // Until it ends: another person may approve, pause or cancel it, and its operations end one by one.
  await every(
    REFRESH_MS,
    signal,
    async () => {
      await refresh();
      refreshNote.textContent = '';
      return isOver(rollout.state);
    },
    (error) => {
      refreshNote.textContent = `Could not read the rollout again (${error.message ?? error}); trying again.`;
    },
  );
}
