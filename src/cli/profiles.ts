// Remote profiles (`switchyard login`): an API URL and a token per profile
// name, kept in $XDG_CONFIG_HOME/switchyard/config.json with mode 0600. A
// config file that others can read is refused (it holds tokens), naming the fix.
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { InvalidInputError } from '../core/platform/index.js';

export const DEFAULT_PROFILE = 'default';

const profileSchema = z.object({
  url: z.string().url(),
  /** Absent after `logout` of a remote-only profile: it stays remote, and asks for a login. */
  token: z.string().min(1).optional(),
  /** The token's name and role when login verified it (for whoami without a round trip). */
  name: z.string().optional(),
  role: z.string().optional(),
  /** `remote`: this profile never falls back to local mode (CLI.md "Profiles"). */
  mode: z.enum(['remote']).optional(),
});
const configSchema = z.object({
  profiles: z.record(z.string(), profileSchema).default({}),
  /** The profile `profile use` chose; `default` when unset. */
  current: z.string().optional(),
});

export type Profile = z.infer<typeof profileSchema>;
export type ProfileConfig = z.infer<typeof configSchema>;

const PROFILE_NAME = /^[A-Za-z0-9._-]{1,64}$/;

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'switchyard', 'config.json');
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME.test(name))
    throw new InvalidInputError('a profile name is 1–64 characters of letters, digits, . _ -');
  return name;
}

/** The profiles, or none when there is no config file yet. */
export async function readProfiles(path = configPath()): Promise<ProfileConfig> {
  let mode: number;
  try {
    const info = await stat(path);
    mode = info.mode;
    if (typeof process.getuid === 'function' && info.uid !== process.getuid())
      throw new InvalidInputError(
        `${path} belongs to another user (uid ${info.uid}); it holds tokens, so it is not read`,
      );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw error;
  }
  if ((mode & 0o077) !== 0)
    throw new InvalidInputError(
      `${path} can be read by others (mode ${(mode & 0o777).toString(8)}); it holds tokens. Fix: chmod 600 ${path}`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    // Not JSON.parse's message: it quotes the file's text, tokens included.
    throw new InvalidInputError(`${path} is not valid JSON; fix or remove it`);
  }
  const result = configSchema.safeParse(parsed);
  if (!result.success)
    throw new InvalidInputError(
      `${path} is not a Switchyard config (${result.error.issues[0]?.message ?? 'invalid'})`,
    );
  return result.data;
}

/** Written whole to a temporary file (0600) and renamed over the old one. */
export async function writeProfiles(config: ProfileConfig, path = configPath()): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

export async function saveProfile(name: string, profile: Profile, path = configPath()): Promise<void> {
  const config = await readProfiles(path);
  config.profiles[checkProfileName(name)] = profile;
  await writeProfiles(config, path);
}

/** The profile commands use when none is named: the one `profile use` chose, else `default`. */
export function currentProfile(config: ProfileConfig): string {
  return config.current ?? DEFAULT_PROFILE;
}

/** `profile use <name>`: the profile must exist. */
export async function useProfile(name: string, path = configPath()): Promise<void> {
  const config = await readProfiles(path);
  if (!(name in config.profiles))
    throw new InvalidInputError(
      `no profile ${JSON.stringify(name)} (profile list shows them); create it with switchyard login --url <url> --token-stdin --profile ${name}`,
    );
  config.current = name;
  await writeProfiles(config, path);
}

/** True when a profile of that name was there. */
export async function removeProfile(name: string, path = configPath()): Promise<boolean> {
  const config = await readProfiles(path);
  const profile = config.profiles[name];
  if (!profile) return false;
  // A remote-only profile keeps its URL and mode: after logout the CLI still never uses Redis.
  if (profile.mode === 'remote') config.profiles[name] = { url: profile.url, mode: 'remote' };
  else {
    delete config.profiles[name];
    if (config.current === name) delete config.current;
  }
  await writeProfiles(config, path);
  return true;
}
