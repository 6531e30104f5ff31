// Containment that does not need the plugin's cooperation (docs/PROTOCOL.md
// §9.5, §11), with real processes: a plugin that kill -9s its keeper, one that
// SIGSTOPs it, one that SIGSTOPs the spawn helper. Each call still ends within
// its time limit plus grace, cancel still ends it, and afterwards no process of
// the call is alive (by pid). Under Landlock signal scoping the attack itself
// fails (EPERM); with SWITCHYARD_CONFINEMENT=off it succeeds, and the helper's
// subreaper and the host's bounded end take over.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CONFINEMENT_ENV, containment } from '../../../src/core/supervision/containment.js';
import {
  CallCancelledError,
  PluginTimeoutError,
  SwitchyardError,
} from '../../../src/core/platform/errors.js';
import { superviseCall } from '../../../src/core/supervision/supervisor.js';
import { useDataDir } from '../../support/core-suite.js';
import { REPO } from '../../support/data-dir.js';
import { installFixturePackage } from '../../support/manifest.js';
import { killAll, pidFiles, survivors } from '../../support/processes.js';
import { waitFor } from '../../support/wait.js';

const FIXTURE = join(REPO, 'test', 'fixtures', 'fault-plugin.mjs');
const SCOPES = ['project.metadata.read'] as const;
const subreaper = containment().mechanism === 'subreaper';
const LIMIT_MS = 2_500;
const GRACE_MS = 3_000;

const files = useDataDir();
let root: string;
let serial = 0;
beforeAll(() => void ({ dataDir: root } = files));
afterEach(() => {
  delete process.env[CONFINEMENT_ENV];
});

async function attackPackage(mode: string) {
  const name = `${mode}-${++serial}`;
  const identity = {
    id: `fault-${name}`,
    name: `Fault plugin (${mode})`,
    version: '1.0.0',
    capabilities: ['project.inspect'],
    requestedScopes: [...SCOPES],
  };
  const dir = await installFixturePackage(join(root, 'plugins', name), FIXTURE, {
    ...identity,
    executable: 'fault-plugin.mjs',
    arguments: [mode],
  });
  await writeFile(join(dir, 'armed'), '');
  return { dir, mode, identity };
}

/** /proc/<pid>/stat field 4. */
async function parentOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

interface Attack {
  error: unknown;
  elapsedMs: number;
  /** "ok" when the signal was delivered, else the kernel's error code. */
  result: string;
  alive: number[];
}

async function attack(mode: string, options: { cancelAfterAttack?: boolean } = {}): Promise<Attack> {
  const pkg = await attackPackage(mode);
  const cancel = new AbortController();
  let leader = 0;
  const started = performance.now();
  const call = superviseCall({
    executablePath: join(pkg.dir, 'fault-plugin.mjs'),
    arguments: [mode],
    packageDir: pkg.dir,
    identity: pkg.identity,
    grants: [...SCOPES],
    method: 'project.inspect',
    params: { project: { id: 'demo', displayName: 'Demo' } },
    limits: { callTimeoutMs: options.cancelAfterAttack ? 60_000 : LIMIT_MS, graceMs: GRACE_MS },
    signal: cancel.signal,
    onSpawn: (pid) => (leader = pid),
  }).then(
    () => undefined,
    (error: unknown) => error,
  );
  await waitFor('the leader', () => Promise.resolve(leader));
  const [target, result] = await waitFor('the attack', async () => {
    try {
      const words = (await readFile(join(pkg.dir, `attack-${mode}.result`), 'utf8')).trim().split(' ');
      return words.length === 2 ? [Number(words[0]), words[1]!] : undefined;
    } catch {
      return undefined;
    }
  });
  // The keeper as the plugin saw it: once a killed keeper is gone, the leader's
  // parent is the helper (its subreaper), which lives on, shared.
  const keeper = mode === 'stop-helper' ? await parentOf(leader) : target;
  const helper = mode === 'stop-helper' ? target : 0;
  if (options.cancelAfterAttack) cancel.abort();
  const error = await call;
  // "sent": the plugin died right after its signal went out (its keeper's death took it along).
  const delivered = result === 'sent' ? 'ok' : result;
  const elapsedMs = performance.now() - started;
  const pids = [leader, keeper, ...(await pidFiles(pkg.dir)).map((file) => file.pid)];
  // Stopping the helper costs it its life: the host kills its tree. Otherwise it lives on, shared.
  if (mode === 'stop-helper' && delivered === 'ok') pids.push(helper);
  const alive = await survivors([...new Set(pids)], [leader], 500);
  killAll(alive);
  return { error, elapsedMs, result: delivered!, alive };
}

describe.skipIf(!subreaper)('what containment() says is enforced', () => {
  it("signal scoping with the kernel's Landlock ABI, exec by descriptor", () => {
    const { enforced } = containment();
    expect(enforced.join('\n')).toMatch(
      /signal scoping: the plugin cannot signal or ptrace its keeper, the helper or the worker \(Landlock ABI \d+\)/,
    );
    expect(enforced).toContain('start from a read-only verified copy of the package');
  });

  it(`with ${CONFINEMENT_ENV}=off: no signal scoping, and how such a call is still ended`, () => {
    process.env[CONFINEMENT_ENV] = 'off';
    expect(containment().missing.join('\n')).toMatch(
      `kernel confinement (${CONFINEMENT_ENV}=off): no signal scoping (a plugin that kills or stops its keeper is still ended`,
    );
  });
});

describe.skipIf(!subreaper)('a plugin that attacks its own containment', () => {
  for (const confinement of ['on', 'off'] as const) {
    describe(`confinement ${confinement}`, () => {
      const arm = () => {
        if (confinement === 'off') process.env[CONFINEMENT_ENV] = 'off';
      };
      // Under signal scoping the kernel refuses the signal; without it, it is delivered.
      const expected = confinement === 'on' ? 'EPERM' : 'ok';

      it('kill -9 of its keeper: the call ends, nothing of it lives', async () => {
        arm();
        const outcome = await attack('kill-keeper');
        expect(outcome.result).toBe(expected);
        expect(outcome.error).toBeInstanceOf(SwitchyardError);
        expect(outcome.elapsedMs).toBeLessThan(LIMIT_MS + GRACE_MS);
        expect(outcome.alive).toEqual([]);
      }, 30_000);

      it('SIGSTOP of its keeper: the time limit still ends it, nothing of it lives', async () => {
        arm();
        const outcome = await attack('stop-keeper');
        expect(outcome.result).toBe(expected);
        expect(outcome.error).toBeInstanceOf(PluginTimeoutError);
        expect(outcome.elapsedMs).toBeLessThan(LIMIT_MS + GRACE_MS);
        expect(outcome.alive).toEqual([]);
      }, 30_000);

      it('SIGSTOP of its keeper: cancel still ends it at once', async () => {
        arm();
        const outcome = await attack('stop-keeper', { cancelAfterAttack: true });
        expect(outcome.error).toBeInstanceOf(CallCancelledError);
        expect(outcome.elapsedMs).toBeLessThan(GRACE_MS + 2_000);
        expect(outcome.alive).toEqual([]);
      }, 30_000);

      it('SIGSTOP of the spawn helper: the time limit still ends it, nothing of it lives', async () => {
        arm();
        const outcome = await attack('stop-helper');
        expect(outcome.result).toBe(expected);
        expect(outcome.error).toBeInstanceOf(PluginTimeoutError);
        expect(outcome.elapsedMs).toBeLessThan(LIMIT_MS + GRACE_MS);
        expect(outcome.alive).toEqual([]);
      }, 30_000);

      it('SIGSTOP of the spawn helper: cancel still ends it', async () => {
        arm();
        const outcome = await attack('stop-helper', { cancelAfterAttack: true });
        expect(outcome.error).toBeInstanceOf(CallCancelledError);
        expect(outcome.elapsedMs).toBeLessThan(GRACE_MS + 2_000);
        expect(outcome.alive).toEqual([]);
      }, 30_000);
    });
  }
});
