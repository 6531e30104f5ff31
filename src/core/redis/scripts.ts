// The one registry of Switchyard's Lua scripts. Each script is its own file in
// ./lua (header: KEYS, ARGV, result); here each is named once with its key
// count and result type, and defined on a connection with ioredis'
// defineCommand (EVALSHA, falling back to EVAL when Redis lost its cache).
// The build copies ./lua next to the compiled module (package.json `build`).
import { readFileSync } from 'node:fs';
import type { ChainableCommander, Redis } from 'ioredis';

type Arg = string | number;

const SCRIPTS = {
  operationCreate: { file: 'operation-create.lua', keys: 3 },
  operationTransition: { file: 'operation-transition.lua', keys: 1 },
  operationDispatch: { file: 'operation-dispatch.lua', keys: 2 },
  operationCancel: { file: 'operation-cancel.lua', keys: 1 },
  operationDelete: { file: 'operation-delete.lua', keys: 3 },
  lockAcquire: { file: 'lock-acquire.lua', keys: 2 },
  lockRenew: { file: 'lock-renew.lua', keys: 1 },
  lockRelease: { file: 'lock-release.lua', keys: 1 },
  lockReleaseOf: { file: 'lock-release-of.lua', keys: 1 },
  batchRecord: { file: 'batch-record.lua', keys: 6 },
  capAcquire: { file: 'cap-acquire.lua', keys: 2 },
  capRenew: { file: 'cap-renew.lua', keys: 1 },
  rolloutStep: { file: 'rollout-step.lua', keys: 5 },
  rolloutStarted: { file: 'rollout-started.lua', keys: 3 },
  rolloutControl: { file: 'rollout-control.lua', keys: 4 },
  rolloutPreviewStep: { file: 'rollout-preview-step.lua', keys: 4 },
  fairEnter: { file: 'fair-enter.lua', keys: 3 },
  fairPick: { file: 'fair-pick.lua', keys: 8 },
  fairSliceEnd: { file: 'fair-slice-end.lua', keys: 4 },
  fairCancel: { file: 'fair-cancel.lua', keys: 3 },
  operationTurn: { file: 'operation-turn.lua', keys: 1 },
  operationServed: { file: 'operation-served.lua', keys: 1 },
} as const;

/** operation-transition.lua's outcome. */
export type TransitionOutcome = 'ok' | 'missing' | 'terminal' | 'refused' | 'cancel-requested';
/** operation-cancel.lua's outcome. */
export type CancelOutcome = 'missing' | 'terminal' | 'cancelled' | 'requested';
/** operation-dispatch.lua's answer: 'ok', or why the operation must not be sent to the plugin. */
export type DispatchOutcome =
  'ok' | 'not-running' | 'cancel-requested' | 'already-dispatched' | 'lock-not-held';

/** What each script returns (see the header of its file). */
interface ScriptResults {
  operationCreate: [number, string];
  operationTransition: [TransitionOutcome, string];
  operationDispatch: DispatchOutcome;
  operationCancel: [CancelOutcome, string];
  operationDelete: number;
  lockAcquire: string | null;
  lockRenew: number;
  lockRelease: number;
  lockReleaseOf: number;
  /** [how many were recorded, 1 when the batch has ended]. */
  batchRecord: [number, number];
  /** ['ok', 0], or why the call waits and how long before asking again (ms). */
  capAcquire: ['ok' | 'concurrency' | 'rate', number];
  capRenew: number;
  /** [state after, events (JSON array), ...project ids claimed to start now]. */
  rolloutStep: string[];
  /** 1 when the project was still starting (now running), 0 when it had already ended. */
  rolloutStarted: number;
  /** [outcome ('ok' | 'missing' | 'refused'), state before]. */
  rolloutControl: [string, string];
  /** [state after, events (JSON array), ...project ids whose preview is claimed to start now]. */
  rolloutPreviewStep: string[];
  /** How many other batches had work waiting. */
  fairEnter: number;
  /** ['full'] | ['empty'] | ['slice', slice id, batch id, plugin id, start, count, generation]. */
  fairPick: [string, string?, string?, string?, number?, number?, number?];
  fairSliceEnd: number;
  /** The cancelled batch's outstanding slice ids. */
  fairCancel: string[];
  /** The operation's turn: its BullMQ priority. */
  operationTurn: number;
  operationServed: number;
}

export type ScriptName = keyof typeof SCRIPTS;

/** Typed calls: keys first (as many as the script declares), then its ARGV. */
export type Scripts = {
  [N in ScriptName]: (keys: string[], ...args: Arg[]) => Promise<ScriptResults[N]>;
};

let sources: Map<ScriptName, string> | undefined;

/** The script sources, read once per process from ./lua next to this module. */
function loadSources(): Map<ScriptName, string> {
  sources ??= new Map(
    (Object.keys(SCRIPTS) as ScriptName[]).map((name) => [
      name,
      readFileSync(new URL(`./lua/${SCRIPTS[name].file}`, import.meta.url), 'utf8'),
    ]),
  );
  return sources;
}

const defined = new WeakMap<Redis, Scripts>();

/** The scripts on this connection, defined on first use. */
export function scriptsOn(redis: Redis): Scripts {
  const known = defined.get(redis);
  if (known) return known;
  const source = loadSources();
  const commands = redis as unknown as Record<string, (...args: Arg[]) => Promise<unknown>>;
  const scripts = {} as Record<ScriptName, (keys: string[], ...args: Arg[]) => Promise<unknown>>;
  for (const name of Object.keys(SCRIPTS) as ScriptName[]) {
    const command = `sy_${name}`;
    if (typeof commands[command] !== 'function') {
      redis.defineCommand(command, { numberOfKeys: SCRIPTS[name].keys, lua: source.get(name)! });
    }
    scripts[name] = (keys, ...args) => {
      if (keys.length !== SCRIPTS[name].keys) {
        throw new Error(`script ${name} takes ${SCRIPTS[name].keys} keys, not ${keys.length}`);
      }
      return commands[command]!.call(redis, ...keys, ...args);
    };
  }
  defined.set(redis, scripts as Scripts);
  return scripts as Scripts;
}

/**
 * Queues a script call on a pipeline (many calls, one write and one round
 * trip). The pipeline must come from a connection `scriptsOn` has seen.
 */
export function queueScript(
  pipeline: ChainableCommander,
  name: ScriptName,
  keys: string[],
  ...args: Arg[]
): void {
  if (keys.length !== SCRIPTS[name].keys) {
    throw new Error(`script ${name} takes ${SCRIPTS[name].keys} keys, not ${keys.length}`);
  }
  const commands = pipeline as unknown as Record<string, (...args: Arg[]) => unknown>;
  commands[`sy_${name}`]!.call(pipeline, ...keys, ...args);
}
