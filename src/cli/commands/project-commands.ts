// switchyard project …: the projects plugins may look at (docs/CLI.md "Projects").
import type { Command } from 'commander';
import {
  checkLabels,
  type Project,
  type ProjectListing,
  type ScanReport,
} from '../../core/projects/index.js';
import { InvalidInputError } from '../../core/platform/index.js';
import type { Backend } from '../backend.js';
import { withBackend } from '../command-context.js';
import { emit, printTable, say } from '../output.js';
import { MAX_PAGE_LIMIT } from '../../core/redis/index.js';
import type { HistoryEntry } from '../../core/work/batches/index.js';
import { collect, integerFrom } from '../parse.js';
import { WorkFailed } from './work-output.js';

export function registerProjectCommands(program: Command): void {
  const project = program
    .command('project')
    .description('register and trust projects')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard project scan ~/src --trust --label web\n  switchyard project list',
    );

  project
    .command('add <path>')
    .description('register one project directory')
    .option('--id <id>', 'project id (default: the directory name, lower-cased)')
    .option('--name <name>', 'display name (default: the directory name)')
    .option('--trust', 'trust it now (projects start untrusted)')
    .addHelpText('after', '\nExample:\n  switchyard project add ~/src/shop --trust')
    .action(
      async (path: string, options: { id?: string; name?: string; trust?: boolean }, command: Command) =>
        withBackend(command, async ({ config, backend }) => {
          const added = await backend.projects.add(path, options);
          emit(config.json, added, () => printProjects([added]));
        }),
    );

  project
    .command('scan <dir>')
    .description(
      'register each immediate subdirectory of <dir> it can; list each one refused (exit 1 if any)',
    )
    .option('--trust', 'trust them now')
    .option('--label <label>', 'add this label to each one registered (repeat for several)', collect, [])
    .option(
      '--prune',
      'forget the projects registered under <dir> whose directory is gone (renamed or deleted)',
    )
    .addHelpText(
      'after',
      '\nEach row says new, known (registered before) or missing (its directory is gone: a renamed directory\nis a new project, and the old one stays missing until forgotten with --prune or `project forget <id>`).\n\nExamples:\n  switchyard project scan ~/src --trust --label web\n  switchyard project scan ~/src --prune',
    )
    .action(
      async (dir: string, options: { trust?: boolean; label: string[]; prune?: boolean }, command: Command) =>
        withBackend(command, async ({ config, backend }) => {
          const labels = checkLabels(options.label);
          const report = await backend.projects.scan(dir, {
            ...(options.trust ? { trust: true } : {}),
            ...(labels.length > 0 ? { labels } : {}),
            ...(options.prune ? { prune: true } : {}),
          });
          emit(config.json, report, () => {
            printScan(report, dir);
            // One line each, never cut to the width: the reason names the fix.
            for (const refusal of report.refused) say(`refused ${refusal.path}: ${refusal.reason}`);
          });
          if (report.refused.length > 0)
            throw new WorkFailed(
              `${report.refused.length} director${report.refused.length === 1 ? 'y was' : 'ies were'} refused; ${report.registered.length} registered`,
            );
        }),
    );

  project
    .command('list')
    .description('all registered projects, with their labels and whether their root is missing')
    .addHelpText('after', '\nExample:\n  switchyard project list --json')
    .action(async (_options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const projects = await backend.projects.list();
        emit(config.json, projects, () => printProjects(projects));
      }),
    );

  const label = project
    .command('label')
    .description('labels: name groups of projects (inspect --label picks them)')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard project label add shop web prod\n  switchyard project label remove shop prod',
    );
  for (const [name, adding] of [
    ['add', true],
    ['remove', false],
  ] as const) {
    label
      .command(`${name} <id> <labels...>`)
      .description(
        adding
          ? 'add labels to a project (lower-case a-z 0-9 . _ -, up to 63)'
          : 'remove labels from a project',
      )
      .addHelpText('after', `\nExample:\n  switchyard project label ${name} shop web`)
      .action(async (id: string, labels: string[], _options, command: Command) =>
        withBackend(command, async ({ config, backend }) => {
          const checked = checkLabels(labels); // all checked before any is changed
          let updated: Project | undefined;
          if (adding) updated = await backend.projects.addLabels(id, checked);
          else for (const one of checked) updated = await backend.projects.removeLabel(id, one);
          emit(config.json, updated, () => printProjects([updated!]));
        }),
      );
  }

  for (const [name, trusted] of [
    ['trust', true],
    ['untrust', false],
  ] as const) {
    project
      .command(`${name} <id>`)
      .description(
        trusted ? 'allow plugins to be called on this project' : 'stop all plugin calls on this project',
      )
      .addHelpText('after', `\nExample:\n  switchyard project ${name} shop`)
      .action(async (id: string, _options, command: Command) =>
        withBackend(command, async ({ config, backend }) => {
          const updated = await backend.projects.setTrusted(id, trusted);
          emit(config.json, updated, () => printProjects([updated]));
        }),
      );
  }

  project
    .command('history <id>')
    .description("the project's result in each of a plugin's kept batches, newest first")
    .option(
      '--plugin <plugin>',
      'the plugin whose inspections to show (may be left out when one is installed)',
    )
    .option(
      '--limit <n>',
      `look at this many of the plugin's newest batches (default 50, at most ${MAX_PAGE_LIMIT})`,
      integerFrom('--limit', 1, MAX_PAGE_LIMIT),
    )
    .addHelpText('after', '\nExample:\n  switchyard project history shop --plugin go-inspector')
    .action(async (id: string, options: { plugin?: string; limit?: number }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const plugin = options.plugin ?? (await onlyPlugin(backend));
        const history = await backend.work.projectHistory(id, plugin, options.limit);
        emit(config.json, history, () => printHistory(id, plugin, history));
      }),
    );

  project
    .command('remove <id>')
    .alias('forget')
    .description('forget a project (its files are not touched); alias: forget')
    .addHelpText('after', '\nExample:\n  switchyard project remove shop')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const removed = await backend.projects.remove(id);
        emit(config.json, removed, () => say(`removed project ${id} (${removed.root})`));
      }),
    );
}

/** A scan's rows: new, known or missing (forgotten with --prune), and how to forget the missing ones. */
function printScan(report: ScanReport, dir: string): void {
  const rows: [Project, string][] = [
    ...report.registered.map((project): [Project, string] => [project, project.scan]),
    ...report.missing.map((project): [Project, string] => [
      project,
      report.pruned.includes(project.id) ? 'forgotten' : 'missing',
    ]),
  ];
  if (rows.length === 0) return say(`no directories under ${dir}`);
  printTable(
    ['ID', 'SCAN', 'NAME', 'TRUSTED', 'LABELS', 'ROOT'],
    rows.map(([project, scan]) => [
      project.id,
      scan,
      project.displayName,
      project.trusted ? 'yes' : 'no',
      project.labels.join(' '),
      project.root,
    ]),
  );
  const left = report.missing.filter((project) => !report.pruned.includes(project.id));
  if (left.length > 0)
    say(
      `${left.length} project${left.length === 1 ? "'s directory is" : "s' directories are"} gone (renamed or deleted: a renamed one is registered again as a new project); forget ${left.length === 1 ? 'it' : 'them'} with \`switchyard project scan ${dir} --prune\` or \`switchyard project forget ${left[0]!.id}\`${left.length > 1 ? ' (one at a time)' : ''}`,
    );
}

function printProjects(projects: (Project | ProjectListing)[]): void {
  if (projects.length === 0) return say('no projects; add one with `switchyard project add <path>`');
  printTable(
    ['ID', 'NAME', 'TRUSTED', 'LABELS', 'ROOT'],
    projects.map((project) => [
      project.id,
      project.displayName,
      project.trusted ? 'yes' : 'no',
      project.labels.join(' '),
      'rootMissing' in project && project.rootMissing ? `${project.root} (missing)` : project.root,
    ]),
  );
}

function printHistory(projectId: string, pluginId: string, history: HistoryEntry[]): void {
  if (history.length === 0)
    return say(`no kept batch of ${pluginId} included ${projectId}; inspect it with \`switchyard inspect\``);
  printTable(
    ['BATCH', 'AT', 'STATUS', 'FACTS', 'WARNINGS'],
    history.map((entry) => [
      entry.batchId,
      entry.at,
      entry.error ? `${entry.status}: ${entry.error.code}` : entry.status,
      Object.entries(entry.facts)
        .map(([fact, { value }]) => `${fact}=${value}`)
        .join(' '),
      entry.warnings.join('; '),
    ]),
  );
}

/** The one installed plugin, for a command whose --plugin may be left out; else a usage error naming them. */
async function onlyPlugin(backend: Backend): Promise<string> {
  const plugins = await backend.plugins.list();
  if (plugins.length === 1) return plugins[0]!.id;
  throw new InvalidInputError(
    plugins.length === 0
      ? 'no plugin is installed (plugin list shows them)'
      : `name the plugin with --plugin: ${plugins.map((plugin) => plugin.id).join(', ')} are installed`,
  );
}
