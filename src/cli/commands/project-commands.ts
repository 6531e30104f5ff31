// switchyard project …: the projects plugins may look at (docs/CLI.md "Projects").
import type { Command } from 'commander';
import type { Project } from '../../core/projects/index.js';
import { withBackend } from '../command-context.js';
import { emit, printTable, say } from '../output.js';

export function registerProjectCommands(program: Command): void {
  const project = program
    .command('project')
    .description('register and trust projects')
    .addHelpText('after', '\nExamples:\n  switchyard project scan ~/src --trust\n  switchyard project list');

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
    .description('register each immediate subdirectory of <dir>')
    .option('--trust', 'trust them now')
    .addHelpText('after', '\nExample:\n  switchyard project scan ~/src --trust')
    .action(async (dir: string, options: { trust?: boolean }, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const added = await backend.projects.scan(dir, options);
        emit(config.json, added, () => printProjects(added));
      }),
    );

  project
    .command('list')
    .description('all registered projects')
    .addHelpText('after', '\nExample:\n  switchyard project list --json')
    .action(async (_options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const projects = await backend.projects.list();
        emit(config.json, projects, () => printProjects(projects));
      }),
    );

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
    .command('remove <id>')
    .description('forget a project (its files are not touched)')
    .addHelpText('after', '\nExample:\n  switchyard project remove shop')
    .action(async (id: string, _options, command: Command) =>
      withBackend(command, async ({ config, backend }) => {
        const removed = await backend.projects.remove(id);
        emit(config.json, removed, () => say(`removed project ${id} (${removed.root})`));
      }),
    );
}

function printProjects(projects: Project[]): void {
  if (projects.length === 0) return say('no projects; add one with `switchyard project add <path>`');
  printTable(
    ['ID', 'NAME', 'TRUSTED', 'ROOT'],
    projects.map((project) => [
      project.id,
      project.displayName,
      project.trusted ? 'yes' : 'no',
      project.root,
    ]),
  );
}
