// The exact environment a host gives a plugin process (docs/PROTOCOL.md §9.3):
// PATH, TMPDIR and LANG copied when set, plus the protocol marker. Nothing else,
// not even HOME, so no inherited secret can reach plugin code.
import { PROTOCOL_ENV_VAR, PROTOCOL_VERSION } from './constants.js';

const COPIED = ['PATH', 'TMPDIR', 'LANG'] as const;

export function pluginEnvironment(hostEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of COPIED) {
    const value = hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  env[PROTOCOL_ENV_VAR] = PROTOCOL_VERSION;
  return env;
}
