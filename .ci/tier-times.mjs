#!/usr/bin/env node
// Where the suite's time goes, from the JSON report vitest writes beside its
// usual output (vitest.config.ts): per tier (the folder under test/, and the
// SDK's tests), the files' summed time and the span from its first file's
// start to its last file's end (files run two at a time, then the serial project
// one at a time, vitest.config.ts: a tier's file time can exceed its span, and
// the spans of tiers overlap), then the slowest files. The suite's time is a budget: a
// clean-clone CI run must stay well under its 90-minute stop.
//   node .ci/tier-times.mjs [report=test-artifacts/vitest-report.json] [slowest=10]
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const reportPath = resolve(root, process.argv[2] ?? 'test-artifacts/vitest-report.json');
const slowest = Number(process.argv[3] ?? 10);
if (!existsSync(reportPath)) {
  console.log(`tier times: no vitest report at ${relative(root, reportPath)} (did the tests run?)`);
  process.exit(0);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));

/** test/cli/team-login.test.ts → cli; sdk/test/x.test.ts → sdk */
const tierOf = (file) => {
  const [top, second] = file.split('/');
  return top === 'test' ? second : top;
};
const files = report.testResults.map((result) => {
  const file = relative(root, result.name);
  return {
    file,
    tier: tierOf(file),
    start: result.startTime,
    end: result.endTime ?? result.startTime,
    ms: (result.endTime ?? result.startTime) - result.startTime,
    tests: result.assertionResults.length,
    failed: result.status === 'failed',
  };
});
const tiers = new Map();
for (const entry of files) {
  const tier = tiers.get(entry.tier) ?? { files: 0, tests: 0, ms: 0, start: Infinity, end: 0 };
  tier.files += 1;
  tier.tests += entry.tests;
  tier.ms += entry.ms;
  tier.start = Math.min(tier.start, entry.start);
  tier.end = Math.max(tier.end, entry.end);
  tiers.set(entry.tier, tier);
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const pad = (text, width) => String(text).padEnd(width);
const padLeft = (text, width) => String(text).padStart(width);
const end = Math.max(...files.map((entry) => entry.end));
console.log(`\nvitest: ${files.length} files, ${seconds(end - report.startTime)} wall from its start`);
console.log(
  `${pad('tier', 12)}${padLeft('files', 6)}${padLeft('tests', 7)}${padLeft('file time', 12)}${padLeft('span', 11)}`,
);
for (const [name, tier] of [...tiers].sort(([, a], [, b]) => b.ms - a.ms))
  console.log(
    `${pad(name, 12)}${padLeft(tier.files, 6)}${padLeft(tier.tests, 7)}${padLeft(seconds(tier.ms), 12)}${padLeft(seconds(tier.end - tier.start), 11)}`,
  );
console.log(`\nthe ${slowest} slowest files:`);
for (const entry of [...files].sort((a, b) => b.ms - a.ms).slice(0, slowest))
  console.log(`${padLeft(seconds(entry.ms), 10)}  ${entry.file}${entry.failed ? ' (failed)' : ''}`);
