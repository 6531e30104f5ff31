// switchyard login / logout / whoami: remote profiles (CLI.md "two modes").
// A token is read from a file or stdin, never from the command line, checked
// against GET /api/v1/me, and stored with the URL in a 0600 config file.
import { open } from 'node:fs/promises';
import type { Command } from 'commander';
import { routes } from '../../core/contract/index.js';
import { localUser } from '../../core/runtime/index.js';
import { callRoute, pathOf } from '../api-calls.js';
import { ERROR_CODES, InvalidInputError } from '../../core/platform/index.js';
import { NotAllowedError } from '../cli-errors.js';
import { TOKEN_PATTERN, redact } from '../../core/safety/index.js';
import { targetOf } from '../command-context.js';
import { ApiClient } from '../http.js';
import { emit, printTable, say } from '../output.js';
import {
  DEFAULT_PROFILE,
  checkProfileName,
  configPath,
  currentProfile,
  readProfiles,
  removeProfile,
  saveProfile,
  useProfile,
} from '../profiles.js';
import { resolveTarget } from '../target.js';

/** How long `profile list` waits for each API: its answer is a hint, and an API out of reach must not hold the list. */
const TOKEN_CHECK_MS = 3_000;

/**
 * Whether a profile's token still works, asked of its API (GET /api/v1/me): `ok`, `expired`,
 * `revoked or unknown`, `unreachable`, or `logged out` (no token kept). A profile that only says
 * what `login` saw would show a revoked token as fine until the next command fails.
 */
async function tokenStatus(url: string, token: string | undefined): Promise<string> {
  if (token === undefined) return 'logged out';
  try {
    await new ApiClient(url, token).request('GET', pathOf(routes.me), { timeoutMs: TOKEN_CHECK_MS });
    return 'ok';
  } catch (error) {
    if (error instanceof NotAllowedError)
      return error.code === ERROR_CODES.TOKEN_EXPIRED ? 'expired' : 'revoked or unknown';
    return 'unreachable';
  }
}

/** The mode a command runs in, for logout to say it. */
function modeSentence(target: Awaited<ReturnType<typeof resolveTarget>>): string {
  return target.mode === 'local'
    ? 'now in local mode (Redis directly, as admin); use --remote or a profile with mode remote to refuse that'
    : `now in remote mode: ${target.url}${target.profile ? ` (profile ${target.profile})` : ''}${target.token ? '' : `; no token: switchyard login --url ${target.url} --token-stdin${target.profile ? ` --profile ${target.profile}` : ''}`}`;
}

export function registerSessionCommands(program: Command): void {
  program
    .command('login')
    .description('check a token against the API and keep it, with the URL, as a profile')
    // --url and --profile are the global options (switchyard login --url … [--profile …]).
    .option('--token-file <file>', 'read the token from this file')
    .option('--token-stdin', 'read the token from standard input')
    .addHelpText(
      'after',
      '\nExamples:\n  switchyard login --url http://127.0.0.1:7317 --token-file ~/.switchyard-token\n  pass show switchyard | switchyard login --url https://sy.example --token-stdin --profile work',
    )
    .action(async (options: { tokenFile?: string; tokenStdin?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals() as {
        json?: boolean;
        url?: string;
        profile?: string;
        remote?: boolean;
      };
      const json = globals.json === true;
      const profile = checkProfileName(globals.profile ?? DEFAULT_PROFILE);
      if (globals.url === undefined)
        throw new InvalidInputError('login needs the API: switchyard login --url <url> --token-stdin');
      const url = parseUrl(globals.url);
      const token = await readToken(options);
      const me = (await callRoute(new ApiClient(url, token), routes.me)).body;
      await saveProfile(profile, {
        url,
        token,
        name: me.name,
        role: me.role,
        ...(globals.remote ? { mode: 'remote' as const } : {}),
      });
      emit(
        json,
        {
          profile,
          url,
          name: me.name,
          role: me.role,
          ...(me.expiresAt ? { expiresAt: me.expiresAt } : {}),
        },
        () =>
          say(`logged in to ${url} as ${me.name} (${me.role}); profile ${profile} saved in ${configPath()}`),
      );
    });

  program
    .command('logout')
    .description('forget a profile (the token stays valid until an admin revokes it)')
    .addHelpText('after', '\nExample:\n  switchyard logout --profile work')
    .action(async (_options, command: Command) => {
      const globals = command.optsWithGlobals() as { json?: boolean; profile?: string };
      const profile = checkProfileName(globals.profile ?? currentProfile(await readProfiles()));
      const removed = await removeProfile(profile);
      // A remote-only profile stays (its URL, without the token): commands that name it stay remote.
      const kept = removed && (await readProfiles()).profiles[profile] !== undefined;
      // What the next command talks to, said rather than found out (local mode is admin over Redis).
      const after = await resolveTarget({ ...command.optsWithGlobals(), profile: undefined });
      const named = kept ? await resolveTarget({ ...command.optsWithGlobals(), profile }) : after;
      const both = kept && (after.mode === 'local' || after.profile !== profile);
      emit(
        globals.json === true,
        {
          profile,
          removed,
          kept,
          mode: named.mode,
          ...(named.mode === 'remote' ? { url: named.url } : {}),
          ...(both
            ? { withoutProfile: { mode: after.mode, ...(after.mode === 'remote' ? { url: after.url } : {}) } }
            : {}),
        },
        () => {
          say(
            !removed
              ? `no profile ${profile}`
              : kept
                ? `logged out: profile ${profile} forgot its token (it stays, remote-only, without one)`
                : `logged out: profile ${profile} removed`,
          );
          say(`${both ? `with --profile ${profile}: ` : ''}${modeSentence(named)}`);
          if (both) say(`without --profile: ${modeSentence(after)}`);
        },
      );
    });

  const profileCommand = program
    .command('profile')
    .description('the saved API profiles (kubectl contexts): list them, choose the current one')
    .addHelpText('after', '\nExamples:\n  switchyard profile list\n  switchyard profile use work');
  profileCommand
    .command('list')
    .description('each profile: name, URL, token name and role, mode; * marks the current one')
    .addHelpText('after', '\nExample:\n  switchyard profile list')
    .action(async (_options, command: Command) => {
      const json = (command.optsWithGlobals() as { json?: boolean }).json === true;
      const config = await readProfiles();
      const current = currentProfile(config);
      const rows = await Promise.all(
        Object.entries(config.profiles).map(async ([name, profile]) => ({
          name,
          current: name === current,
          url: profile.url,
          ...(profile.name ? { tokenName: profile.name } : {}),
          ...(profile.role ? { role: profile.role } : {}),
          loggedIn: profile.token !== undefined,
          mode: profile.mode ?? 'auto',
          token: await tokenStatus(profile.url, profile.token),
        })),
      );
      emit(json, rows, () => {
        if (rows.length === 0)
          return say('no profiles: local mode. Add one with switchyard login --url <url> --token-stdin');
        printTable(
          ['CURRENT', 'NAME', 'URL', 'TOKEN', 'STATUS', 'MODE'],
          rows.map((row) => [
            row.current ? '*' : '',
            row.name,
            row.url,
            row.loggedIn ? `${row.tokenName ?? '?'} (${row.role ?? '?'})` : '(logged out)',
            row.token,
            row.mode,
          ]),
        );
      });
    });
  profileCommand
    .command('use <name>')
    .description('make a profile the current one: commands use it when no --profile or --url is given')
    .addHelpText('after', '\nExample:\n  switchyard profile use work')
    .action(async (name: string, _options, command: Command) => {
      const json = (command.optsWithGlobals() as { json?: boolean }).json === true;
      await useProfile(checkProfileName(name));
      const profile = (await readProfiles()).profiles[name]!;
      emit(json, { current: name, url: profile.url, mode: profile.mode ?? 'auto' }, () =>
        say(`current profile: ${name} (${profile.url}${profile.mode === 'remote' ? ', remote only' : ''})`),
      );
    });

  program
    .command('whoami')
    .description('the token name, role and API URL in use (local mode: the OS user, as admin)')
    .addHelpText('after', '\nExample:\n  switchyard whoami --profile work')
    .action(async (_options, command: Command) => {
      const json = (command.optsWithGlobals() as { json?: boolean }).json === true;
      const target = await targetOf(command);
      if (target.mode === 'local') {
        const name = localUser();
        return emit(json, { mode: 'local', name, role: 'admin' }, () =>
          say(`${name} (admin: local mode, talking to Redis directly)`),
        );
      }
      const me = (await callRoute(new ApiClient(target.url, target.token), routes.me)).body;
      emit(
        json,
        {
          mode: 'remote',
          name: me.name,
          role: me.role,
          url: target.url,
          ...(target.profile ? { profile: target.profile } : {}),
          ...(target.tokenSource ? { tokenSource: target.tokenSource } : {}),
          ...(me.expiresAt ? { expiresAt: me.expiresAt } : {}),
        },
        // The token's real source: an environment token overrides the profile's.
        () =>
          say(
            `${me.name} (${me.role}) at ${target.url}${target.tokenSource ? ` [${target.tokenSource}]` : ''}${me.expiresAt ? `; expires ${me.expiresAt}` : ''}`,
          ),
      );
    });
}

function parseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidInputError(
      `--url ${JSON.stringify(text)} is not a URL; example: --url http://127.0.0.1:7317`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidInputError('--url must be an http:// or https:// URL');
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/** The most bytes a token file or standard input may hold: a token is 59 characters. */
const MAX_TOKEN_SOURCE_BYTES = 4_096;

/**
 * The token of --token-file or --token-stdin: the first line, trimmed (a line
 * after it, such as a note, is ignored), in the shape of a Switchyard token. A
 * file others can read is refused, as a config file is, and so is a file or an
 * input larger than 4 KiB. No message quotes what was read (it may be the token,
 * or the token with something else), and a path is quoted redacted (a token
 * given as the path by mistake is not printed).
 */
async function readToken(options: { tokenFile?: string; tokenStdin?: boolean }): Promise<string> {
  if ((options.tokenFile === undefined) === (options.tokenStdin !== true))
    throw new InvalidInputError(
      'give the token with exactly one of --token-file <file> or --token-stdin (never on the command line: it lands in shell history)',
    );
  const source = options.tokenFile !== undefined ? redact(options.tokenFile) : 'standard input';
  const text = options.tokenFile !== undefined ? await readTokenFile(options.tokenFile) : await readStdin();
  const token = (text.split(/\r\n|\n|\r/, 1)[0] ?? '').trim();
  if (token === '')
    throw new InvalidInputError(
      `${source}: the first line is empty; it must hold the token (\`switchyard token create … > file\` writes just that)`,
    );
  if (!TOKEN_PATTERN.test(token))
    throw new InvalidInputError(
      `${source} does not hold a Switchyard API token on its first line (sy_, 12 lower-case letters or digits, _, 43 characters)`,
    );
  return token;
}

async function readTokenFile(path: string): Promise<string> {
  const shown = redact(path);
  const file = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    throw new InvalidInputError(`cannot open the token file ${shown}: ${openFailure(error)}`);
  });
  try {
    const info = await file.stat();
    if (!info.isFile()) throw new InvalidInputError(`${shown} is not a file; --token-file needs a file`);
    if (typeof process.getuid === 'function' && info.uid !== process.getuid())
      throw new InvalidInputError(
        `${shown} belongs to another user (uid ${info.uid}); a token file must be yours`,
      );
    if ((info.mode & 0o077) !== 0)
      throw new InvalidInputError(
        `${shown} can be read by others (mode ${(info.mode & 0o777).toString(8)}); it holds a token. Fix: chmod 600 ${shown}`,
      );
    if (info.size > MAX_TOKEN_SOURCE_BYTES)
      throw new InvalidInputError(`${shown} is larger than a token file (4 KiB)`);
    return await file.readFile('utf8');
  } finally {
    await file.close();
  }
}

/** Why a token file did not open, without the error's own message (it quotes the path). */
function openFailure(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return error.code ?? 'it cannot be read';
  }
}

/** Standard input to its end, refused past 4 KiB (as a token file is). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_TOKEN_SOURCE_BYTES)
      throw new InvalidInputError(
        'standard input is larger than a token (4 KiB); pipe just the token, e.g. `pass show switchyard | switchyard login … --token-stdin`',
      );
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
