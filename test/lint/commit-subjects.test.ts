// scripts/check-commit-subjects.mjs in throwaway git repositories: a subject
// of 73 characters fails it and one of 72 passes; a range leaves out what is
// before it; without the recorded baseline (another history, a shallow clone)
// only HEAD is checked, saying so; outside a git checkout it checks nothing.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/data-dir.js';

const SCRIPT = join(REPO, 'scripts', 'check-commit-subjects.mjs');
const IDENTITY = ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false'];
const subjectOf = (length: number) => `Subject ${'x'.repeat(length - 'Subject '.length)}`;

let dir = '';
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', [...IDENTITY, ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
const commit = (subject: string) => {
  git(join(dir, 'repo'), 'commit', '--allow-empty', '-q', '-m', subject);
  return git(join(dir, 'repo'), 'rev-parse', 'HEAD');
};
const check = (cwd: string, ...args: string[]) => {
  const run = spawnSync(process.execPath, [SCRIPT, ...args], { cwd, encoding: 'utf8' });
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-subjects-'));
  git(dir, 'init', '-q', 'repo');
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('commit subjects', () => {
  it('a range: a subject over 72 characters fails, naming it; 72 pass; what is before the range is left out', () => {
    const first = commit('Start');
    const long = commit(subjectOf(73));
    commit(subjectOf(72));
    const failed = check(join(dir, 'repo'), `${first}..HEAD`);
    expect(failed.code, failed.out).toBe(1);
    expect(failed.out).toContain(`${long.slice(0, 7)}: the subject has 73 characters (at most 72)`);
    expect(failed.out).toMatch(/1 of 2 over 72 characters/);
    const after = check(join(dir, 'repo'), `${long}..HEAD`);
    expect(after.code, after.out).toBe(0);
    expect(after.out).toMatch(/1 checked .*none over 72/);
  });

  it('without the baseline (another history, a shallow clone) only HEAD is checked, and it says so', () => {
    const own = check(join(dir, 'repo'));
    expect(own.code, own.out).toBe(0);
    expect(own.out).toMatch(/baseline \w+ is missing \(this history does not hold it\); checking HEAD only/);
    git(dir, 'clone', '-q', '--depth', '1', `file://${join(dir, 'repo')}`, 'shallow');
    const shallow = check(join(dir, 'shallow'));
    expect(shallow.code, shallow.out).toBe(0);
    expect(shallow.out).toMatch(/\(this clone is shallow\); checking HEAD only.*git fetch --unshallow/);
    commit(subjectOf(73));
    const longHead = check(join(dir, 'repo'));
    expect(longHead.code, longHead.out).toBe(1);
    expect(longHead.out).toMatch(/1 of 1 over 72 characters in HEAD/);
  });

  it('outside a git checkout: nothing to check, exit 0', () => {
    const outside = check(dir);
    expect(outside.code, outside.out).toBe(0);
    expect(outside.out).toMatch(/not a git checkout/);
  });
});
