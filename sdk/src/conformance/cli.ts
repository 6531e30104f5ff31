#!/usr/bin/env node
// switchyard-plugin-conformance <package-dir>: one line per check; exit 0 when no
// check failed (warnings allowed), 1 when one did, 2 on a usage error.
import { parseArgs } from 'node:util';
import { runConformance, type ConformanceCheck } from './run.js';

const usage =
  'usage: switchyard-plugin conformance <package-dir> [--strict] [--action <id>] [--timeout-ms <n>] [--json]';

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        'timeout-ms': { type: 'string' },
        action: { type: 'string' },
        json: { type: 'boolean' },
        strict: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${usage}\n`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(
      `${usage}\n\nStarts the package's executable as a Switchyard host would (argument array,\npackage directory as cwd, minimal environment) and checks switchyard.plugin/v1.\n\nRequired checks are what a host needs; strict checks (the TypeScript SDK's\nextra strictness) print "warn" when they fail, or FAIL with --strict.\n\nOf the actions project.inspect lists, the kit runs the first whose risk is "none"\nfor real (input {}); --action <id> names another one to run instead (it may\nchange what it acts on: the kit's project is an empty temporary directory).\nWithout either, that check is skipped. --timeout-ms is the wait for each answer.\nExit 0: no check failed; 1: a check failed; 2: usage error.\n\nexample: switchyard-plugin conformance ./dist\n`,
    );
    return 0;
  }
  const [packageDir, ...extra] = parsed.positionals;
  if (!packageDir || extra.length > 0) {
    process.stderr.write(`${usage}\n`);
    return 2;
  }
  const timeoutMs =
    parsed.values['timeout-ms'] === undefined ? undefined : Number(parsed.values['timeout-ms']);
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs <= 0)) {
    process.stderr.write(`--timeout-ms must be a positive integer\n${usage}\n`);
    return 2;
  }
  const json = parsed.values.json === true;
  const print = (check: ConformanceCheck) => {
    const mark = { pass: 'ok  ', fail: 'FAIL', warn: 'warn', skip: 'skip' }[check.status];
    process.stdout.write(`${mark}  ${check.name}${check.detail ? `: ${check.detail}` : ''}\n`);
  };
  const report = await runConformance(packageDir, {
    ...(timeoutMs ? { timeoutMs } : {}),
    ...(json ? {} : { onCheck: print }),
    strict: parsed.values.strict === true,
    ...(parsed.values.action === undefined ? {} : { action: parsed.values.action }),
  });
  if (json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } else {
    const count = (status: ConformanceCheck['status']) =>
      report.checks.filter((check) => check.status === status).length;
    const who = report.plugin ? `${report.plugin.id} ${report.plugin.version}` : packageDir;
    const warnings = count('warn');
    const warned = warnings === 0 ? '' : `, ${warnings} warning${warnings === 1 ? '' : 's'}`;
    process.stdout.write(
      `${report.ok ? 'PASS' : 'FAIL'}  ${who}: ${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped${warned}\n`,
    );
  }
  return report.ok ? 0 : 1;
}

process.exitCode = await main();
