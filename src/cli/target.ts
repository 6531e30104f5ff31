// Which mode a command runs in (CLI.md "two modes"): remote with --url /
// SWITCHYARD_URL / a profile, local (Redis directly) otherwise. A profile's
// token is only ever sent to that profile's URL.
import { InvalidInputError, readEnv } from '../core/platform/index.js';
import { note } from './output.js';
import { currentProfile, readProfiles, type Profile } from './profiles.js';

export interface RemoteOptions {
  url?: string;
  token?: string;
  profile?: string | undefined;
  redisUrl?: string;
  /** --remote: never fall back to local mode. */
  remote?: boolean;
}

/** Where the token in use came from, as whoami names it: `--token`, `SWITCHYARD_TOKEN` or `profile <name>`. */
export type TokenSource = '--token' | 'SWITCHYARD_TOKEN' | `profile ${string}`;

export type Target =
  | { mode: 'local' }
  | {
      mode: 'remote';
      url: string;
      token: string | undefined;
      profile: string | undefined;
      tokenSource: TokenSource | undefined;
    };

export async function resolveTarget(
  options: RemoteOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Target> {
  const explicitProfile = options.profile ?? readEnv('SWITCHYARD_PROFILE', env);
  const explicitUrl = options.url ?? readEnv('SWITCHYARD_URL', env);
  const explicitRedis = options.redisUrl ?? readEnv('SWITCHYARD_REDIS_URL', env);
  if (options.token !== undefined)
    note(
      'warning: with --token, the token lands in your shell history and is visible in `ps`; use `switchyard login --token-stdin` or SWITCHYARD_TOKEN',
    );
  const remoteOnly = options.remote === true;
  // The current profile applies on its own only when nothing asks for local mode.
  if (explicitUrl === undefined && explicitProfile === undefined && explicitRedis !== undefined) {
    if (remoteOnly)
      throw new InvalidInputError(
        '--remote and --redis-url disagree: remote mode talks to the API, not Redis',
      );
    return { mode: 'local' };
  }
  const config = await readProfiles();
  const profileName = explicitProfile ?? currentProfile(config);
  const profile: Profile | undefined = config.profiles[profileName];
  if (explicitProfile !== undefined && !profile)
    throw new InvalidInputError(
      `no profile ${JSON.stringify(explicitProfile)}; create it with switchyard login --url <url> --token-stdin --profile ${explicitProfile}`,
    );
  const url = explicitUrl ?? profile?.url;
  if (url === undefined) {
    // Remote only (--remote, or a profile with mode remote): never Redis instead.
    if (remoteOnly)
      throw new InvalidInputError(
        `--remote: no API to talk to (profile ${profileName} does not exist); give --url <url>, or switchyard login --url <url> --token-stdin`,
      );
    return { mode: 'local' };
  }
  const sameServer = profile !== undefined && sameUrl(profile.url, url);
  const envToken = readEnv('SWITCHYARD_TOKEN', env);
  const [token, tokenSource]: [string | undefined, TokenSource | undefined] =
    options.token !== undefined
      ? [options.token, '--token']
      : envToken !== undefined
        ? [envToken, 'SWITCHYARD_TOKEN']
        : sameServer && profile.token !== undefined
          ? [profile.token, `profile ${profileName}`]
          : [undefined, undefined];
  return {
    mode: 'remote',
    url: url.replace(/\/+$/, ''),
    token,
    profile: sameServer ? profileName : undefined,
    tokenSource,
  };
}

function sameUrl(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}
