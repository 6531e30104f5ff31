// switchyard rollout create / show / list / approve / pause / resume / cancel:
// one action across a selection of projects, in waves, within a failure
// budget (docs/CLI.md "Rollouts").
import { once } from 'node:events';
import type { Command } from 'commander';
import { routes } from '../../core/contract/index.js';
import { MAX_PAGE_LIMIT } from '../../core/redis/index.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_FAILURES,
  DEFAULT_WAVES,
  ROLLOUT_EXPORT_FORMATS,
  ROLLOUT_STATES,
  isRolloutOver,
  type RolloutExportFormat,
  type RolloutProjectView,
  type RolloutState,
  type RolloutView,
} from '../../core/work/rollouts/index.js';
import { InvalidInputError } from '../../core/platform/index.js';
import type { Backend } from '../backend.js';
import { refuseUnlessRole, withBackend } from '../command-context.js';
import {
  ago,
  emit,
  errorText,
  escapeControlKeepingLines,
  note,
  printFields,
  printJson,
  printTable,
  say,
} from '../output.js';
import { collect, oneOf, parseJsonInput, positiveInt, requireYes } from '../parse.js';
import { REF_HELP } from '../work-refs.js';
import { WorkFailed } from './work-output.js';

const WATCH_EVERY_MS = 1_000;

interface CreateOptions {
  all?: boolean;
  label: string[];
  where: string[];
  advertised?: boolean;
  input?: string;
  name?: string;
  waves?: string;
  concurrency?: number;
  maxFailures?: string;
  pauseBetween?: boolean;
  previewAction?: string;
  yes?: boolean;
  wait?: boolean;
}

export function registerRolloutCommands(program: Command): void {
  const rollout = program
    .command('rollout')
    .description('one action across many projects: selected, approved, in waves, stopped by failures')
    .addHelpText(
      'after',
      "\nExamples:\n  switchyard rollout create go-inspector go.upgrade --where 'go.version<1.21' --advertised --yes\n  switchyard rollout show latest --watch",
    );
  rollout
    .command('create <plugin> <action> [projects...]')
    .description(
      'run <action> on a selection fixed now (several selectors: their intersection); prints the rollout id',
    )
    .option('--all', 'every registered project')
    .option('--label <label>', 'projects with this label (repeat: all of them)', collect, [])
    .option('--where <expr>', "the facts filter over the plugin's latest results (repeatable)", collect, [])
    .option('--advertised', 'projects whose latest successful inspection advertised the action')
    .option('--input <json>', 'the action input, as JSON (the same for every project)')
    .option('--name <name>', 'a name to recognise it by')
    .option('--waves <list>', `cumulative counts or shares of the selection (default ${DEFAULT_WAVES})`)
    .option(
      '--concurrency <n>',
      `operations at once within a wave (default ${DEFAULT_CONCURRENCY})`,
      positiveInt('--concurrency'),
    )
    .option('--max-failures <n|p%>', `failures allowed before it pauses (default ${DEFAULT_MAX_FAILURES})`)
    .option('--pause-between', 'pause after each wave until rollout resume')
    .option(
      '--preview-action <action>',
      'first run this action (risk none, e.g. a dry run) on every project; then await approval',
    )
    .option('--yes', 'confirm: this lets the plugin change every selected project')
    .option('--wait', 'follow it to its end (exit 1 unless it succeeded)')
    .addHelpText(
      'after',
      "\nAn action whose risk is not none waits for `rollout approve` by another admin; so does any rollout\nwith --preview-action, once its previews have ended (rollout show lists them).\n\nExample:\n  switchyard rollout create go-inspector go.upgrade --where 'go.version<1.21' --waves 1,10%,100% --max-failures 5 --yes",
    )
    .action(
      async (
        pluginId: string,
        action: string,
        projects: string[],
        options: CreateOptions,
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend, target }) => {
          const input = parseJsonInput(options.input);
          await refuseUnlessRole(target, routes.createRollout, 'rollout create');
          requireYes(
            options.yes,
            `rollout create ${pluginId} ${action} …`,
            `this runs the action ${action} of ${pluginId} on every selected project, which may change them`,
          );
          const created = await backend.rollouts.create({
            pluginId,
            action,
            input,
            ...(options.name !== undefined ? { name: options.name } : {}),
            ...(options.waves !== undefined ? { waves: options.waves } : {}),
            ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
            ...(options.maxFailures !== undefined ? { maxFailures: options.maxFailures } : {}),
            ...(options.pauseBetween ? { pauseBetween: true } : {}),
            ...(options.previewAction !== undefined ? { previewAction: options.previewAction } : {}),
            selection: {
              ...(options.all ? { all: true } : {}),
              ...(options.label.length > 0 ? { labels: options.label } : {}),
              ...(options.where.length > 0 ? { where: options.where } : {}),
              ...(options.advertised ? { advertised: true } : {}),
              ...(projects.length > 0 ? { projects } : {}),
            },
          });
          if (!options.wait) {
            if (config.json) return printJson(created);
            say(created.id);
            return describeStart(created);
          }
          const started = `rollout ${created.id} ${created.state}`;
          if (config.json) process.stderr.write(`${started}\n`);
          else say(started);
          await watch(backend, created.id, config.json);
        }),
    );

  rollout
    .command('show <rollout>')
    .description('one rollout: state, waves, counts, failures first, skipped projects')
    .option('--plugin <id>', 'with latest or latest~N: the newest rollout of this plugin')
    .option('--watch', 'redraw until it ends (exit 1 unless it succeeded)')
    .addHelpText('after', `\n${REF_HELP}\n\nExample:\n  switchyard rollout show latest --watch`)
    .action(async (ref: string, options: { plugin?: string; watch?: boolean }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const id = await rolloutIdOf(backend, ref, options.plugin);
        if (options.watch) return watch(backend, id, config.json);
        const shown = await backend.rollouts.get(id);
        const projects = await backend.rollouts.projects(id);
        emit(config.json, { ...shown, projects }, () => printRollout(shown, projects));
      }),
    );

  rollout
    .command('list')
    .description('the newest rollouts')
    .option(
      '--state <state>',
      `only this state: ${ROLLOUT_STATES.join(', ')}`,
      oneOf('--state', ROLLOUT_STATES),
    )
    .option('--plugin <id>', 'only this plugin')
    .option('--limit <n>', 'how many', positiveInt('--limit'), 20)
    .addHelpText('after', '\nExample:\n  switchyard rollout list --state paused --plugin go-inspector')
    .action(async (options: { state?: RolloutState; plugin?: string; limit: number }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const { items } = await backend.rollouts.list({
          limit: Math.min(options.limit, MAX_PAGE_LIMIT),
          ...(options.state ? { state: options.state } : {}),
          ...(options.plugin ? { pluginId: options.plugin } : {}),
        });
        if (config.json) return printJson(items);
        printTable(
          ['ROLLOUT', 'NAME', 'PLUGIN', 'ACTION', 'STATE', 'DONE', 'FAILED', 'CREATED'],
          items.map((item) => [
            item.id,
            item.name,
            item.pluginId,
            item.action,
            item.state,
            `${item.total - item.counts.pending - item.counts.running}/${item.total}`,
            String(item.counts.failed + item.counts.outcome_unknown),
            ago(item.createdAt),
          ]),
        );
      }),
    );

  rollout
    .command('approve <rollout>')
    .description('start a rollout awaiting approval (admin; another admin than its creator)')
    .option('--yes', 'confirm: this lets the plugin change every selected project')
    .addHelpText(
      'after',
      `\nThe rollout's whole id or a unique prefix of its hex digits; never latest (approve the one you reviewed).\n\nExample:\n  switchyard rollout approve 5c1d20aa --yes`,
    )
    .action(async (ref: string, options: { yes?: boolean }, command: Command) =>
      withBackend(command, async ({ config, backend, target }) => {
        // `latest` names whichever rollout is newest when this runs, maybe not the one reviewed.
        if (/^latest(~\d+)?$/i.test(ref.trim()))
          throw new InvalidInputError(
            `rollout approve takes the rollout's id or a unique prefix of it, not ${JSON.stringify(ref)}: approving lets the plugin change every selected project, so name the rollout you reviewed (rollout list --state awaiting-approval shows them)`,
          );
        await refuseUnlessRole(target, routes.approveRollout, 'rollout approve');
        const id = await rolloutIdOf(backend, ref, undefined);
        const pending = await backend.rollouts.get(id);
        requireYes(
          options.yes,
          `rollout approve ${ref}`,
          `this starts ${pending.action} of ${pending.pluginId} (risk ${pending.risk}) on ${pending.total} projects`,
        );
        const approved = await backend.rollouts.approve(id);
        emit(config.json, approved, () => say(`rollout ${approved.id} ${approved.state}`));
      }),
    );

  rollout
    .command('retry <rollout>')
    .description(
      "a new rollout of this one's failed projects (never its OUTCOME_UNKNOWN ones), same action, input and budget",
    )
    .option('--failed', 'the failed projects (required: the only kind retried)')
    .option('--plugin <id>', 'with latest or latest~N: the newest rollout of this plugin')
    .option('--yes', 'confirm: this lets the plugin change the failed projects again')
    .addHelpText('after', `\n${REF_HELP}\n\nExample:\n  switchyard rollout retry latest --failed --yes`)
    .action(
      async (ref: string, options: { failed?: boolean; plugin?: string; yes?: boolean }, command: Command) =>
        withBackend(command, async ({ config, backend, target }) => {
          if (!options.failed)
            throw new InvalidInputError('say which projects: rollout retry <id> --failed (the failed ones)');
          await refuseUnlessRole(target, routes.retryRollout, 'rollout retry');
          requireYes(
            options.yes,
            `rollout retry ${ref} --failed`,
            'this runs the action again on the failed projects',
          );
          const created = await backend.rollouts.retryFailed(await rolloutIdOf(backend, ref, options.plugin));
          if (config.json) return printJson(created);
          say(created.id);
          describeStart(created);
        }),
    );

  rollout
    .command('export <rollout>')
    .description('every project with its wave, state, operation and error: jsonl or csv on stdout')
    .option(
      '--format <format>',
      `${ROLLOUT_EXPORT_FORMATS.join(' or ')} (default jsonl)`,
      oneOf('--format', ROLLOUT_EXPORT_FORMATS),
      'jsonl' as RolloutExportFormat,
    )
    .option('--plugin <id>', 'with latest or latest~N: the newest rollout of this plugin')
    .addHelpText(
      'after',
      `\n${REF_HELP}\n\nExample:\n  switchyard rollout export latest --format csv > rollout.csv`,
    )
    .action(
      async (ref: string, options: { format: RolloutExportFormat; plugin?: string }, command: Command) =>
        withBackend(command, async ({ backend }) => {
          const onTerminal = process.stdout.isTTY === true;
          const id = await rolloutIdOf(backend, ref, options.plugin);
          for await (const chunk of await backend.rollouts.export(id, options.format)) {
            const text = onTerminal ? escapeControlKeepingLines(chunk) : chunk;
            if (!process.stdout.write(text)) await once(process.stdout, 'drain');
          }
        }),
    );

  const control = [
    ['pause', 'start no new operation; the running ones end', routes.pauseRollout],
    ['resume', 'go on from a pause (past a failure budget: admin only)', routes.resumeRollout],
    ['cancel', 'projects not started never start; running operations are cancelled', routes.cancelRollout],
  ] as const;
  for (const [verb, description, route] of control) {
    rollout
      .command(`${verb} <rollout>`)
      .description(description)
      .option('--plugin <id>', 'with latest or latest~N: the newest rollout of this plugin')
      .addHelpText('after', `\n${REF_HELP}\n\nExample:\n  switchyard rollout ${verb} latest`)
      .action(async (ref: string, options: { plugin?: string }, command: Command) =>
        withBackend(command, async ({ config, backend, target }) => {
          await refuseUnlessRole(target, route, `rollout ${verb}`);
          const changed = await backend.rollouts[verb](await rolloutIdOf(backend, ref, options.plugin));
          emit(config.json, changed, () =>
            say(
              `rollout ${changed.id} ${changed.state}${changed.pausedReason ? `: ${changed.pausedReason}` : ''}`,
            ),
          );
        }),
      );
  }
}

function rolloutIdOf(backend: Backend, ref: string, plugin: string | undefined): Promise<string> {
  return backend.rollouts.resolve(ref, plugin ? { pluginId: plugin } : {});
}

/** What a new rollout will do, on stderr: stdout is its id alone, for `ID=$(rollout create …)`. */
function describeStart(created: RolloutView): void {
  const skipped = created.skipped.length > 0 ? `, ${created.skipped.length} skipped` : '';
  note(`  ${created.total} projects in ${created.waves.length} waves${skipped}; ${created.state}`);
  if (created.state === 'previewing')
    note(
      `  previewing with ${created.previewAction} on every project; then it awaits approval (rollout show ${created.id} lists the previews)`,
    );
  if (created.state === 'awaiting-approval')
    note(
      `  risk ${created.risk}: another admin approves it with  switchyard rollout approve ${created.id} --yes`,
    );
}

/** Redraws (text) or prints once at the end (JSON) until the rollout ends; exit 1 unless it succeeded. */
async function watch(backend: Backend, id: string, json: boolean): Promise<void> {
  let last = '';
  for (;;) {
    const current = await backend.rollouts.get(id);
    const line = progressLine(current);
    if (!json && line !== last) say(line);
    last = line;
    if (isRolloutOver(current.state)) {
      const projects = await backend.rollouts.projects(id);
      if (json) printJson({ ...current, projects });
      else printRollout(current, projects);
      if (current.state !== 'succeeded') throw new WorkFailed(`rollout ${id} ${current.state}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, WATCH_EVERY_MS));
  }
}

function progressLine(view: RolloutView): string {
  if (view.state === 'previewing' && view.previewCounts) return `previewing  ${previewLine(view)}`;
  const { counts } = view;
  const wave = view.waves.find((entry) => entry.state !== 'done') ?? view.waves.at(-1);
  return `${view.state}  wave ${wave?.index ?? '-'}/${view.waves.length}  ✓${counts.succeeded} ✗${counts.failed + counts.outcome_unknown} ⊘${counts.cancelled} ▶${counts.running} …${counts.pending} /${view.total}${view.pausedReason ? `  (${view.pausedReason})` : ''}`;
}

function previewLine(view: RolloutView): string {
  const counts = view.previewCounts!;
  return `${view.previewAction}: ✓${counts.succeeded} ✗${counts.failed + counts.outcome_unknown} ⊘${counts.cancelled} ▶${counts.running} …${counts.pending} /${view.total}`;
}

/** Each project's preview, failures first: state, summary or error, and its output (one line, cut). */
function printPreviews(projects: RolloutProjectView[]): void {
  const previewed = projects.filter((project) => project.preview);
  if (previewed.length === 0) return;
  say('');
  const sorted = [...previewed].sort(
    (a, b) => ORDER.indexOf(a.preview!.state) - ORDER.indexOf(b.preview!.state),
  );
  printTable(
    ['PREVIEW', 'STATE', 'SUMMARY', 'OUTPUT', 'OPERATION'],
    sorted.map(({ projectId, preview }) => [
      projectId,
      preview!.state,
      preview!.errorCode ? errorText(preview!.errorCode, preview!.errorMessage) : preview!.summary,
      preview!.output !== undefined ? oneLine(JSON.stringify(preview!.output)) : undefined,
      preview!.operationId,
    ]),
  );
}

const PREVIEW_OUTPUT_CHARS = 120;
function oneLine(text: string): string {
  return text.length > PREVIEW_OUTPUT_CHARS ? `${text.slice(0, PREVIEW_OUTPUT_CHARS)}…` : text;
}

const ORDER = ['outcome_unknown', 'failed', 'running', 'starting', 'cancelled', 'pending', 'succeeded'];

function printRollout(view: RolloutView, projects: RolloutProjectView[]): void {
  printFields([
    ['rollout', view.id],
    ['name', view.name],
    ['plugin', view.pluginId],
    ['action', `${view.action} (risk ${view.risk})`],
    ['input', JSON.stringify(view.input)],
    ['state', view.state],
    ['paused', view.pausedReason],
    ['selection', view.selection.join(' ')],
    ['created', `${view.createdAt} by ${view.createdBy}`],
    ['approved by', view.approvedBy],
    ['cancelled by', view.cancelledBy],
    ['finished', view.finishedAt],
    ['waves', view.waves.map((wave) => `${wave.index}: ${wave.size} projects, ${wave.state}`)],
    ['concurrency', String(view.concurrency)],
    ['max failures', String(view.maxFailures)],
    ['preview', view.previewCounts ? previewLine(view) : undefined],
    ['progress', progressLine(view)],
  ]);
  printPreviews(projects);
  if (view.skipped.length > 0) {
    say('');
    printTable(
      ['SKIPPED', 'REASON'],
      view.skipped.map((entry) => [entry.projectId, entry.reason]),
    );
  }
  if (projects.length === 0) return;
  say('');
  // Failures first: what a person has to look at.
  const sorted = [...projects].sort((a, b) => ORDER.indexOf(a.state) - ORDER.indexOf(b.state));
  printTable(
    ['PROJECT', 'WAVE', 'STATE', 'OPERATION', 'ERROR'],
    sorted.map((project) => [
      project.projectId,
      String(project.wave),
      project.state,
      project.operationId,
      project.errorCode ? errorText(project.errorCode, project.errorMessage) : undefined,
    ]),
  );
}
