#!/usr/bin/env node
// Fails when a commit subject is longer than CONTRIBUTING's 72 characters.
// Checked: the commits after BASELINE (merges too), so the older history,
// written before the check, never fails it; or the commits of a range given
// as the argument (`main..HEAD` for a branch before it is merged). In a
// shallow clone the baseline may be missing: then only HEAD's own subject is
// checked (it always comes after the baseline, as this script does), and the
// message says how to fetch the rest. Run by .ci/run; git must be on PATH.
//   node scripts/check-commit-subjects.mjs [range]
import { execFileSync } from 'node:child_process';

const MAX_SUBJECT = 72;
/** main's head when the check was added: every commit after it is checked. */
const BASELINE = 'bfb4c8e3efd0dbf35c671b8dab54c349f920abfe';

/** git's answer to `args` in the current directory, or undefined when it fails. */
function git(args) {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
}

/** `<hash> <subject>` per commit of `revisions` (arguments of git log). */
function subjects(revisions) {
  const log = git(['log', '--format=%h %s', ...revisions]);
  if (log === undefined) throw new Error(`git log ${revisions.join(' ')} failed`);
  return log
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => ({ hash: line.slice(0, line.indexOf(' ')), subject: line.slice(line.indexOf(' ') + 1) }));
}

/** What to check and why: the revisions for git log and a line that says which commits they are. */
function scope(range) {
  if (range) return { revisions: [range], what: `the commits of ${range}` };
  if (git(['cat-file', '-e', `${BASELINE}^{commit}`]) !== undefined)
    return { revisions: [`${BASELINE}..HEAD`], what: `the commits after ${BASELINE.slice(0, 12)}` };
  const shallow = git(['rev-parse', '--is-shallow-repository'])?.trim() === 'true';
  const why = shallow ? 'this clone is shallow' : 'this history does not hold it';
  console.log(
    `commit subjects: the baseline ${BASELINE.slice(0, 12)} is missing (${why}); checking HEAD only. ` +
      'To check every commit after it: git fetch --unshallow (or a deeper --depth).',
  );
  return { revisions: ['-1', 'HEAD'], what: 'HEAD' };
}

function main() {
  if (git(['rev-parse', '--git-dir']) === undefined) {
    console.log('commit subjects: not a git checkout (or git is missing); nothing to check.');
    return 0;
  }
  const { revisions, what } = scope(process.argv[2]);
  const commits = subjects(revisions);
  const long = commits.filter(({ subject }) => [...subject].length > MAX_SUBJECT);
  for (const { hash, subject } of long)
    console.error(
      `${hash}: the subject has ${[...subject].length} characters (at most ${MAX_SUBJECT}): ${subject}`,
    );
  if (long.length > 0) {
    console.error(
      `commit subjects: ${long.length} of ${commits.length} over ${MAX_SUBJECT} characters in ${what}; ` +
        'shorten them (git rebase -i, reword) and say the rest in the body (CONTRIBUTING.md, Commits).',
    );
    return 1;
  }
  console.log(`commit subjects: ${commits.length} checked (${what}), none over ${MAX_SUBJECT} characters.`);
  return 0;
}

process.exitCode = main();
