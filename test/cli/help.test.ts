// `--help` for every command and subcommand: exit 0 and an example. The
// commands are the ones docs/CLI.md names plus whatever `--help` itself lists, so
// a command added later is covered too.
import { describe, expect, it } from 'vitest';
import { requireBuiltCli, runCli, type CliResult } from './support.js';

/** Every command of docs/CLI.md, as the words one types after `switchyard`. */
const DOCUMENTED = [
  'up',
  'api',
  'worker',
  'scheduler',
  'plugin',
  'plugin refresh',
  'plugin list',
  'plugin show',
  'plugin trust',
  'plugin enable',
  'plugin disable',
  'plugin health',
  'plugin logs',
  'project',
  'project add',
  'project scan',
  'project list',
  'project trust',
  'project untrust',
  'project remove',
  'inspect',
  'batch',
  'batch show',
  'batch list',
  'run',
  'op',
  'op list',
  'op show',
  'op cancel',
  'op wait',
  'rollout',
  'rollout create',
  'rollout show',
  'rollout list',
  'rollout approve',
  'rollout pause',
  'rollout resume',
  'rollout cancel',
  'rollout retry',
  'rollout export',
  'audit',
  'facts',
  'project history',
];

/** Runs `switchyard <words> --help` for each, at most `LIMIT` at once. */
const LIMIT = 6;
async function helpsOf(commands: string[]): Promise<Map<string, CliResult>> {
  const results = new Map<string, CliResult>();
  const queue = [...commands];
  const lane = async () => {
    for (let command = queue.shift(); command !== undefined; command = queue.shift())
      results.set(command, await runCli([...(command ? command.split(' ') : []), '--help']));
  };
  await Promise.all(Array.from({ length: LIMIT }, lane));
  return results;
}

/** The names in the "Commands:" section of a help text (not `help` itself). */
function subcommandsIn(help: string): string[] {
  const section = help.split(/^Commands:\s*$/m)[1];
  if (!section) return [];
  const names: string[] = [];
  for (const line of section.split('\n')) {
    if (/^\S/.test(line)) break; // the next section
    const match = /^ {2}([a-z][\w-]*)/.exec(line); // entries are indented by two; wrapped text by more
    if (match && match[1] !== 'help') names.push(match[1]!);
  }
  return names;
}

/**
 * Walks `--help` from the top, level by level: every command and subcommand
 * it lists, with its help output ('' is the program itself).
 */
async function discover(): Promise<Map<string, CliResult>> {
  const all = await helpsOf(['']);
  let level = [''];
  while (level.length > 0) {
    const next = level.flatMap((command) =>
      subcommandsIn(all.get(command)!.stdout).map((name) => (command ? `${command} ${name}` : name)),
    );
    for (const [command, result] of await helpsOf(next)) all.set(command, result);
    level = next;
  }
  return all;
}

requireBuiltCli();
const helps = await discover();
const discovered = [...helps.keys()].filter((command) => command !== '');
for (const [command, result] of await helpsOf(DOCUMENTED.filter((command) => !helps.has(command))))
  helps.set(command, result);
const commands = [...new Set([...DOCUMENTED, ...discovered])].sort();

describe('--help', () => {
  it('lists every command docs/CLI.md documents', () => {
    expect(discovered.length).toBeGreaterThan(0);
    expect(DOCUMENTED.filter((command) => !discovered.includes(command))).toEqual([]);
  });

  it('switchyard --help exits 0 and shows the global options', () => {
    const result = helps.get('')!;
    expect(result.code, result.stderr).toBe(0);
    for (const option of ['--data-dir', '--redis-url', '--json']) expect(result.stdout).toContain(option);
  });

  it.each(commands)('switchyard %s --help exits 0 with an example', (command) => {
    const result = helps.get(command)!;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Usage: switchyard ${command}`);
    expect(result.stdout, `no example in \`switchyard ${command} --help\``).toContain('Example');
  });

  // A URL with a password on a command line is read by every local user (`ps`):
  // no example may show one (README: the worker reads it from a 0600 file).
  it.each(['', ...commands])('switchyard %s --help shows no password in a URL', (command) => {
    const result = helps.get(command)!;
    const text = result.stdout + result.stderr;
    expect(text).not.toMatch(/:password@/i);
    expect(text).not.toMatch(/:\/\/[^\s/@]*:[^\s/@]*@/);
  });
});
