// switchyard completion bash|zsh|fish: completion scripts generated from the
// command tree itself (commands, subcommands, options), plus plugin, project,
// batch and operation ids, asked of `switchyard __complete <kind>` (the same
// backend as every command: local Redis or the remote API; silent on failure).
// Batches and operations complete to `latest` and the short (8 hex digit)
// prefixes of the newest ones, which every command taking them accepts.
import type { Command, Option } from 'commander';
import { InvalidInputError } from '../../core/platform/index.js';
import { escapeControl } from '../../core/safety/index.js';
import { withBackend } from '../command-context.js';

type IdKind = 'plugins' | 'projects' | 'batches' | 'operations' | '';
const RECENT_FOR_COMPLETION = 50;

interface Node {
  path: string[];
  subcommands: string[];
  options: string[];
  /** Options that take a value (their next word is not a command or id). */
  valued: string[];
  /** What each positional argument completes to; the last one repeats when variadic. */
  args: IdKind[];
  description: string;
}

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion <shell>')
    .description('print a completion script: bash, zsh or fish')
    .addHelpText(
      'after',
      '\nExamples:\n  source <(switchyard completion bash)\n  switchyard completion fish > ~/.config/fish/completions/switchyard.fish',
    )
    .action((shell: string) => {
      const nodes = walk(program, []);
      const globals = optionNames(program.options);
      const script =
        shell === 'bash'
          ? bashScript(nodes, globals)
          : shell === 'zsh'
            ? `#compdef switchyard\nautoload -U +X bashcompinit && bashcompinit\n${bashScript(nodes, globals)}`
            : shell === 'fish'
              ? fishScript(nodes, globals)
              : undefined;
      if (script === undefined) throw new InvalidInputError('completion supports bash, zsh and fish');
      process.stdout.write(script);
    });

  program
    .command('__complete <kind>', { hidden: true })
    .description('ids for shell completion')
    .action(async (kind: string, _options, command: Command) => {
      try {
        await withBackend(command, async ({ backend }) => {
          const recent = { limit: RECENT_FOR_COMPLETION };
          const ids =
            kind === 'plugins'
              ? (await backend.plugins.list()).map((plugin) => plugin.id)
              : kind === 'projects'
                ? (await backend.projects.list()).map((project) => project.id)
                : kind === 'batches'
                  ? shortIds((await backend.work.listBatches(recent)).items.map((batch) => batch.batchId))
                  : kind === 'operations'
                    ? shortIds((await backend.work.listOperations(recent)).items.map((item) => item.id))
                    : [];
          process.stdout.write(completableIds(ids).join(''));
        });
      } catch {
        // Completion must never print errors into the user's command line.
      }
    });
}

function walk(command: Command, path: string[]): Node[] {
  const visible = command.commands.filter((child) => !(child as unknown as { _hidden?: boolean })._hidden);
  const node: Node = {
    path,
    subcommands: visible.map((child) => child.name()),
    options: path.length === 0 ? [] : optionNames(command.options),
    valued: command.options
      .filter((option) => option.required || option.optional)
      .map((option) => option.long!),
    args: command.registeredArguments.map((argument) => idKind(path, argument.name())),
    description: command.description(),
  };
  return [node, ...visible.flatMap((child) => walk(child, [...path, child.name()]))];
}

function idKind(path: string[], name: string): IdKind {
  if (name === 'plugin' || (name === 'id' && path[0] === 'plugin')) return 'plugins';
  if (name === 'project' || name === 'projects' || (name === 'id' && path[0] === 'project'))
    return 'projects';
  if (name === 'batch' || name === 'refs' || name === 'batchA' || name === 'batchB') return 'batches';
  if (name === 'operation') return 'operations';
  return '';
}

function optionNames(options: readonly Option[]): string[] {
  return options.flatMap((option) => (option.long ? [option.long] : [])).concat('--help');
}

function bashScript(nodes: Node[], globals: string[]): string {
  const valued = [...new Set(nodes.flatMap((node) => node.valued))];
  const cases = nodes
    .map((node) => {
      const words = [...node.subcommands, ...node.options].join(' ');
      const args = node.args.map((kind) => kind || '-').join(' ');
      return `    "${node.path.join(' ')}") subs="${node.subcommands.join(' ')}"; words="${words}"; args="${args}" ;;`;
    })
    .join('\n');
  return `# switchyard completion for bash (source <(switchyard completion bash))
_switchyard() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" positional=0 i w skip=0 subs="" words="" args=""
  local valued=" ${valued.join(' ')} "
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if ((skip)); then skip=0; continue; fi
    case "$w" in
      --*=*) continue ;;
      -*) [[ "$valued" == *" $w "* ]] && skip=1; continue ;;
    esac
    if _switchyard_is_command "$path" "$w"; then path="\${path:+$path }$w"; else positional=$((positional + 1)); fi
  done
  ((skip)) && return 0
  _switchyard_node "$path"
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$words ${globals.join(' ')}" -- "$cur"))
    return 0
  fi
  local kinds=($args) kind=""
  if ((\${#kinds[@]} > 0)); then
    if ((positional < \${#kinds[@]})); then kind="\${kinds[positional]}"; else kind="\${kinds[\${#kinds[@]} - 1]}"; fi
  fi
  if [[ -n "$subs" && $positional -eq 0 && -z "$args" ]]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  elif [[ -n "$kind" && "$kind" != - ]]; then
    COMPREPLY=($(compgen -W "$("\${COMP_WORDS[0]}" __complete "$kind" 2>/dev/null)" -- "$cur"))
  fi
  return 0
}
_switchyard_node() {
  case "$1" in
${cases}
    *) subs=""; words=""; args="" ;;
  esac
}
_switchyard_is_command() {
  local subs words args
  _switchyard_node "$1"
  [[ " $subs " == *" $2 "* ]]
}
complete -o default -F _switchyard switchyard
`;
}

function fishScript(nodes: Node[], globals: string[]): string {
  const lines = ['# switchyard completion for fish', 'complete -c switchyard -f'];
  for (const option of globals) lines.push(`complete -c switchyard -l ${option.slice(2)}`);
  for (const node of nodes) {
    if (node.path.length === 0) {
      for (const name of node.subcommands) {
        const child = nodes.find((other) => other.path.length === 1 && other.path[0] === name);
        lines.push(
          `complete -c switchyard -n __fish_use_subcommand -a ${name} -d ${quote(child?.description ?? '')}`,
        );
      }
      continue;
    }
    const condition =
      node.path.length === 1
        ? `__fish_seen_subcommand_from ${node.path[0]}`
        : `__fish_seen_subcommand_from ${node.path[0]}; and __fish_seen_subcommand_from ${node.path[1]}`;
    for (const name of node.subcommands) {
      const child = nodes.find((other) => other.path.join(' ') === [...node.path, name].join(' '));
      lines.push(
        `complete -c switchyard -n ${quote(condition)} -a ${name} -d ${quote(child?.description ?? '')}`,
      );
    }
    for (const option of node.options)
      lines.push(`complete -c switchyard -n ${quote(condition)} -l ${option.slice(2)}`);
    const kind = node.args.find((item) => item !== '');
    if (kind)
      lines.push(
        `complete -c switchyard -n ${quote(condition)} -a '(switchyard __complete ${kind} 2>/dev/null)'`,
      );
  }
  return `${lines.join('\n')}\n`;
}

function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** `latest`, then each generated id by its first 8 hex digits (a unique prefix in practice). */
function shortIds(ids: string[]): string[] {
  return ['latest', ...ids.map((id) => id.replace(/^[a-z]+_/, '').slice(0, 8))];
}

/**
 * The ids as completion lines. An id with a control character (a line break,
 * ESC; only a broken or hostile server sends one) is left out: the shell would
 * print it raw in its list of candidates, and escaped it would name nothing.
 */
export function completableIds(ids: string[]): string[] {
  return ids.filter((id) => escapeControl(id) === id).map((id) => `${id}\n`);
}
