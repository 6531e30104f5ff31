// switchyard facts: the fleet as a plugin last saw it — each project's latest
// successful inspection, filtered, as a table, CSV or JSON, or one fact's
// values counted (docs/CLI.md "Fleet facts").
import type { Command } from 'commander';
import { countFactValues, fleetCsv, type FleetRow } from '../../core/work/batches/index.js';
import { InvalidInputError } from '../../core/platform/index.js';
import { withBackend } from '../command-context.js';
import { ago, note, printJson, printTable } from '../output.js';
import { collect, oneOf } from '../parse.js';

/** Without --fact, the table shows this many facts (the rest: --json, --format csv, or name them). */
const DEFAULT_COLUMNS = 6;

export function registerFactsCommand(program: Command): void {
  program
    .command('facts')
    .description("the fleet as a plugin last saw it: each project's latest successful inspection, filtered")
    .argument('<plugin>', 'plugin id')
    .option(
      '--fact <id>',
      'show this fact (repeat for more; default: every fact, the first six in a table)',
      collect,
      [],
    )
    .option(
      '--where <expr>',
      'only projects whose fact matches: NAME=VALUE, NAME!=VALUE, NAME~REGEX, NAME<VERSION (also <=, >, >=; versions compare as versions: 1.9 < 1.10); repeat: all must match',
      collect,
      [],
    )
    .option('--label <label>', 'only projects with this label (repeat: all of them)', collect, [])
    .option(
      '--counts',
      'how many projects have each value of the one --fact: (none) first, then most common first, equal counts in value order (versions as versions)',
    )
    .option(
      '--format <format>',
      'table (default) or csv',
      oneOf('--format', ['table', 'csv'] as const),
      'table',
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        "  switchyard facts go-inspector --fact go.version --where 'go.version<1.20'",
        '  switchyard facts go-inspector --fact go.version --counts',
        '  switchyard facts go-inspector --label payments --format csv > fleet.csv',
      ].join('\n'),
    )
    .action(
      async (
        pluginId: string,
        options: {
          fact: string[];
          where: string[];
          label: string[];
          counts?: boolean;
          format: 'table' | 'csv';
        },
        command: Command,
      ) =>
        withBackend(command, async ({ config, backend }) => {
          if (options.counts && options.fact.length !== 1)
            throw new InvalidInputError('--counts counts the values of one fact: name it with one --fact');
          if (options.counts && options.format === 'csv')
            throw new InvalidInputError('--counts prints a table or --json, not --format csv');
          const rows = await backend.work.fleet(pluginId, {
            where: options.where,
            labels: options.label,
            facts: options.fact,
          });
          if (options.counts) {
            const fact = options.fact[0]!;
            const counts = countFactValues(rows, fact);
            if (config.json) return printJson({ fact, total: rows.length, counts });
            return printTable(
              [fact.toUpperCase(), 'PROJECTS'],
              counts.map(({ value, count }) => [value ?? '(none)', String(count)]),
            );
          }
          const factIds = options.fact.length > 0 ? options.fact : factsSeen(rows);
          if (config.json) return printJson(rows.map((row) => onlyFacts(row, options.fact)));
          if (options.format === 'csv') return void process.stdout.write(fleetCsv(rows, factIds));
          if (rows.length === 0)
            return note(`no project of ${pluginId} matches (only successful inspections count)`);
          const shown = factIds.slice(0, options.fact.length > 0 ? factIds.length : DEFAULT_COLUMNS);
          printTable(
            ['PROJECT', ...shown.map((id) => id.toUpperCase()), 'SEEN'],
            rows.map((row) => [
              row.projectId,
              ...shown.map((id) => row.facts[id]?.value ?? '-'),
              ago(row.at),
            ]),
          );
          if (shown.length < factIds.length)
            note(
              `${factIds.length - shown.length} more facts (${factIds.slice(shown.length).join(', ')}): name them with --fact`,
            );
        }),
    );
}

/** Every fact id any row has, sorted. */
function factsSeen(rows: readonly FleetRow[]): string[] {
  const ids = new Set<string>();
  for (const row of rows) for (const id of Object.keys(row.facts)) ids.add(id);
  return [...ids].sort();
}

/** With --fact, each row keeps only those facts. */
function onlyFacts(row: FleetRow, facts: readonly string[]): FleetRow {
  if (facts.length === 0) return row;
  return {
    ...row,
    facts: Object.fromEntries(facts.flatMap((id) => (row.facts[id] ? [[id, row.facts[id]]] : []))),
  };
}
