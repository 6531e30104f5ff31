// Output fits an 80-column terminal (tmux, a split pane): no line of plugin list,
// batch list, op list, batch show, op logs or --help is wider than COLUMNS,
// states are never cut, and a plugin's failure leads with its message.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_INSPECTOR_DIST, uniquePrefix } from '../support/data-dir.js';
import { startOwnedRedis, type OwnedRedis } from '../support/redis.js';
import {
  CLI,
  cliOn,
  globalArgs,
  requireBuiltCli,
  reviewAndEnable,
  spawnCli,
  startWorker,
  stopAll,
  stopProcess,
  waitFor,
  type Installation,
} from './support.js';

let redis: OwnedRedis;
let root: string;
let installation: Installation;
let cli: ReturnType<typeof cliOn>;
let batchId: string;
let failedOp: string;

const ESC = String.fromCharCode(0x1b);
const SCHEDULE = 'fleet-nightly-versions';
const STATES = /\b(succeeded|failed|cancelled|running|queued|completed|SUCCE…|FAILE…|CANCE…)/;

async function at(columns: string, args: string[]) {
  const saved = process.env.COLUMNS;
  process.env.COLUMNS = columns;
  try {
    return await cli(args);
  } finally {
    if (saved === undefined) delete process.env.COLUMNS;
    else process.env.COLUMNS = saved;
  }
}

function expectFits(text: string, columns: number): void {
  for (const line of text.trimEnd().split('\n'))
    expect([...line].length, `wider than ${columns}: ${line}`).toBeLessThanOrEqual(columns);
  // A state, a trust or a health is never cut (a long name or id may be, with …).
  expect(text).not.toMatch(
    /\b(succe|faile|cance|compl|runni|queue|trust|untru|healt|unhea|enabl|disab|VERSI|STAT|HEAL)[A-Za-z]*…/i,
  );
}

beforeAll(async () => {
  requireBuiltCli();
  redis = await startOwnedRedis();
  root = await mkdtemp(join(tmpdir(), 'switchyard-output-fits-'));
  const dataDir = join(root, 'data');
  await cp(FIXTURE_INSPECTOR_DIST, join(dataDir, 'plugins', 'fixture-inspector'), { recursive: true });
  for (const name of ['shop', 'blog', `a-project-with-a-long-name-${'z'.repeat(14)}`]) {
    await mkdir(join(root, 'projects', name), { recursive: true });
    await writeFile(join(root, 'projects', name, 'package.json'), '{}\n');
  }
  installation = { dataDir, redisUrl: redis.url, prefix: uniquePrefix('output-fits') };
  cli = cliOn(installation);
  await reviewAndEnable(installation, 'fixture-inspector', [
    'project.metadata.read',
    'project.files.read',
    'project.operate',
  ]);
  expect((await cli(['project', 'scan', join(root, 'projects'), '--trust'])).code).toBe(0);
  // A webhook nobody answers (its deliveries retry) and a schedule with a long name.
  await writeFile(join(root, 'hook.secret'), 'a-secret-of-thirty-two-characters\n');
  const hook = await cli([
    'webhook',
    'add',
    '--url',
    'http://127.0.0.1:9/hook',
    '--events',
    'batch.finished,operation.finished',
    '--secret-file',
    join(root, 'hook.secret'),
  ]);
  expect(hook.code, hook.stderr).toBe(0);
  const schedule = await cli([
    'schedule',
    'add',
    'fixture-inspector',
    '--all',
    '--every',
    '1h',
    '--name',
    SCHEDULE,
  ]);
  expect(schedule.code, schedule.stderr).toBe(0);
  await startWorker(installation, 2);
  for (let index = 0; index < 2; index++) {
    const inspected = await cli(['--json', 'inspect', 'fixture-inspector', '--all']);
    expect(inspected.code, inspected.stderr).toBe(0);
    batchId = (JSON.parse(inspected.stdout) as { batchId: string }).batchId;
  }
  const ok = await cli([
    'run',
    'fixture-inspector',
    'shop',
    'fixture.echo',
    '--input',
    '{"a":1}',
    '--yes',
    '--wait',
  ]);
  expect(ok.code, ok.stderr).toBe(0);
  const failed = await cli(['--json', 'run', 'fixture-inspector', 'blog', 'fixture.nope', '--yes', '--wait']);
  failedOp = (JSON.parse(failed.stdout) as { id: string }).id;
}, 180_000);

afterAll(async () => {
  await stopAll();
  await redis?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('output fits COLUMNS', () => {
  const lists: string[][] = [
    ['plugin', 'list'],
    ['batch', 'list'],
    ['op', 'list'],
  ];
  for (const columns of ['80', '60']) {
    it(`at COLUMNS=${columns}: plugin list, batch list, op list, batch show, op logs fit, states whole`, async () => {
      for (const args of [...lists, ['batch', 'show', batchId], ['op', 'logs', failedOp]]) {
        const run = await at(columns, args);
        if (process.env.SY_TRANSCRIPT)
          process.stdout.write(
            `$ COLUMNS=${columns} switchyard ${args.join(' ')}\n${run.stdout}${run.stderr}\n`,
          );
        expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
        // A project id is never cut: at 60 columns batch show's 41-character one keeps its width.
        if (columns === '80' || args[1] !== 'show') expectFits(run.stdout, Number(columns));
      }
      const ops = await at(columns, ['op', 'list']);
      expect(ops.stdout).not.toMatch(/\b(SUCCE|FAILE|CANCE|succe|faile|cance)[a-z]{0,3}…/i);
      expect(ops.stdout).toMatch(/succeeded|✓/);
      expect(ops.stdout).toMatch(/failed|✗/);
      const batches = await at(columns, ['batch', 'list']);
      expect(batches.stdout).toMatch(STATES);
      expect(batches.stdout).not.toMatch(/\b(comple|succe|faile|cance)[a-z]{0,4}…/i);
    });
  }

  it('at 80 columns every table fits and keeps ids short, names, actions and events whole', async () => {
    const scheduler = spawnCli([...globalArgs(installation), 'scheduler']);
    await waitFor(
      async () => {
        const listed = await cli(['--json', 'schedule', 'list']);
        const [item] = JSON.parse(listed.stdout) as { lastRun?: { batch?: { state?: string } } }[];
        return item?.lastRun?.batch?.state === 'succeeded';
      },
      60_000,
      'the schedule to run once',
    );
    await stopProcess(scheduler);
    const tables = [
      ['schedule', 'list'],
      ['audit'],
      ['webhook', 'list'],
      ['webhook', 'deliveries'],
      ['batch', 'list'],
      ['op', 'list'],
      ['project', 'list'],
      ['plugin', 'list'],
      ['queue'],
    ];
    const shown = new Map<string, string>();
    for (const args of tables) {
      const run = await at('80', args);
      if (process.env.SY_TRANSCRIPT)
        process.stdout.write(`$ COLUMNS=80 switchyard ${args.join(' ')}\n${run.stdout}\n`);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      expectFits(run.stdout, 80);
      shown.set(args.join(' '), run.stdout);
    }
    const header = (text: string) => text.split('\n')[0]!;
    const schedules = shown.get('schedule list')!;
    expect(header(schedules)).toMatch(/^ID\s+NAME\s+PLUGIN\s+WHEN\s+NEXT RUN$/);
    expect(schedules).toMatch(new RegExp(`sched_[0-9a-f]+\\s+${SCHEDULE}\\s+fixture-inspector\\s+every 1h`));
    // The long text goes under its row, its batch id shortened.
    expect(schedules).toMatch(/\n {4}LAST RUN \S+ ago: batch_[0-9a-f]{8}… succeeded/);
    const audit = shown.get('audit')!;
    for (const action of [
      'operation.request',
      'operation.finished',
      'webhook.add',
      'schedule.add',
      'batch.create',
    ])
      // Whole, at the end of its line when the TARGET (an id, never cut) went under the row.
      expect(audit).toMatch(new RegExp(` ${action.replace('.', '\\.')}( |$)`, 'm'));
    expect(audit).toMatch(/ op_[0-9a-f]{8}…\n {4}DETAIL \{"/);
    expect(audit).toMatch(/scheduler:sched_[0-9a-f]+ /);
    const deliveries = shown.get('webhook deliveries')!;
    expect(deliveries).toMatch(/ operation\.finished /);
    expect(deliveries).toMatch(/ batch\.finished /);
    expect(shown.get('project list')!).toMatch(/^a-project-with-a-long-name-z{14} /m);
  }, 180_000);

  it('-o wide shows every value whole, whatever the width', async () => {
    const ops = JSON.parse((await cli(['--json', 'op', 'list'])).stdout) as { id: string }[];
    const audit = JSON.parse((await cli(['--json', 'audit'])).stdout) as { detail: unknown }[];
    const batches = JSON.parse((await cli(['--json', 'schedule', 'list'])).stdout) as {
      lastRun: { batchId: string };
    }[];
    const wideOps = await at('80', ['op', 'list', '-o', 'wide']);
    expect(wideOps.code, wideOps.stderr).toBe(0);
    for (const op of ops) expect(wideOps.stdout).toContain(op.id);
    expect(wideOps.stdout).toMatch(/unknown action fixture\.nope.* \(PLUGIN_ERROR -32000\)/);
    const wideAudit = await at('80', ['--output', 'wide', 'audit']);
    for (const entry of audit) expect(wideAudit.stdout).toContain(JSON.stringify(entry.detail));
    const wideSchedules = await at('80', ['-o', 'wide', 'schedule', 'list']);
    expect(wideSchedules.stdout.split('\n')[0]).toMatch(/LAST RUN\s+BY$/);
    expect(wideSchedules.stdout).toContain(batches[0]!.lastRun.batchId);
    expect(wideSchedules.stdout).not.toContain('…');
    const bad = await cli(['-o', 'json', 'op', 'list']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--output must be wide');
  }, 120_000);

  it('the progress bar fits COLUMNS=80 on a terminal', async () => {
    const command = [
      process.execPath,
      CLI,
      ...globalArgs(installation),
      'inspect',
      'fixture-inspector',
      '--all',
    ]
      .map((word) => `'${word}'`)
      .join(' ');
    // script(1) gives the CLI a terminal (no size: it reads COLUMNS), where the bar is drawn.
    const drawn = await new Promise<string>((resolve, reject) =>
      execFile(
        'script',
        ['-qfec', command, '/dev/null'],
        { env: { ...process.env, COLUMNS: '80', NO_COLOR: '1' }, timeout: 60_000 },
        (error, stdout) => (error ? reject(error) : resolve(stdout)),
      ),
    );
    const frames = drawn
      .replaceAll(`${ESC}[1G`, '\n') // each redraw starts at column 1
      .replace(new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]|${ESC}[78]`, 'g'), '')
      .split(/[\r\n]+/)
      .filter((frame) => frame.startsWith('inspecting'));
    expect(frames.length, drawn).toBeGreaterThan(0);
    for (const frame of frames) expect([...frame.trimEnd()].length, frame).toBeLessThanOrEqual(80);
  });

  it('switchyard --help and op --help are wrapped to COLUMNS=80', async () => {
    for (const args of [['--help'], ['op', '--help'], ['plugin', '--help'], ['batch', '--help']]) {
      const run = await at('80', args);
      if (process.env.SY_TRANSCRIPT)
        process.stdout.write(`$ COLUMNS=80 switchyard ${args.join(' ')}\n${run.stdout}\n`);
      expect(run.code).toBe(0);
      expectFits(run.stdout, 80);
    }
  });

  it("a plugin's failure leads with its message; the code is in the details", async () => {
    const shown = await at('80', ['op', 'show', failedOp]);
    expect(shown.stdout).not.toMatch(/PLUGIN_ERROR: /);
    expect(shown.stdout).toMatch(/unknown action fixture\.nope.* \(PLUGIN_ERROR -32000\)/);
    expect(shown.stdout).not.toMatch(/plugin error -32000/);
    // op list's ERROR column too: the message, then the code.
    const listed = await at('200', ['op', 'list']);
    const row = listed.stdout.split('\n').find((line) => line.includes('fixture.nope'));
    expect(row, listed.stdout).toMatch(/\sunknown action fixture\.nope.* \(PLUGIN_ERROR -32000\)/);
  });
});
