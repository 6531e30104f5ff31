// The error catalogue is the one place a code gets its HTTP status, exit
// status and meaning: docs/HTTP-API.md shows exactly its table, every core
// error class carries a code of it (with a status that fits its kind), and no
// module spells a code as a literal instead of reading the constant.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as errors from '../../src/core/platform/errors.js';
import {
  ERROR_CATALOGUE,
  EXIT,
  codeForStatus,
  exitCodeOf,
  httpStatusOf,
  isErrorCode,
  type ErrorEntry,
} from '../../src/core/platform/error-catalogue.js';
import { RedisUnreachableError, ReplicaAckTimeoutError } from '../../src/core/redis/index.js';
import { ApiUnreachableError, NotAllowedError, RemoteProblemError } from '../../src/cli/cli-errors.js';
import { problemError } from '../../src/cli/http.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const START = '<!-- error-catalogue: generated from src/core/platform/error-catalogue.ts -->';
const END = '<!-- /error-catalogue -->';

function renderedTable(): string {
  const rows = Object.entries(ERROR_CATALOGUE as Record<string, ErrorEntry>).map(
    ([code, entry]) => `| \`${code}\` | ${entry.status ?? '—'} | ${entry.exit} | ${entry.means} |`,
  );
  return ['| code | HTTP | exit | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('the error catalogue', () => {
  it("docs/HTTP-API.md's error table is the catalogue's", () => {
    const doc = readFileSync(join(ROOT, 'docs/HTTP-API.md'), 'utf8');
    const start = doc.indexOf(START);
    const end = doc.indexOf(END);
    expect(start, `docs/HTTP-API.md needs the markers ${START} … ${END}`).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    const documented = doc.slice(start + START.length, end).trim();
    expect(
      documented,
      `docs/HTTP-API.md's error table differs from src/core/platform/error-catalogue.ts; put this between the markers:\n${renderedTable()}\n`,
    ).toBe(renderedTable());
  });

  it('every error class carries a code of the catalogue; plugin-call faults answer 502 and exit 1', () => {
    const made: errors.SwitchyardError[] = [];
    for (const value of Object.values(errors)) {
      if (typeof value !== 'function' || !(value.prototype instanceof errors.SwitchyardError)) continue;
      const Made = value as unknown as new (...args: unknown[]) => errors.SwitchyardError;
      made.push(new Made('message', 'x', 'y'));
    }
    made.push(
      new RedisUnreachableError('x'),
      new ReplicaAckTimeoutError('x'),
      new ApiUnreachableError('x'),
      new NotAllowedError('FORBIDDEN', 'x'),
    );
    expect(made.length).toBeGreaterThan(20);
    for (const error of made) {
      expect(isErrorCode(error.code), `${error.constructor.name}'s code ${error.code}`).toBe(true);
      if (!isErrorCode(error.code)) continue;
      const entry: ErrorEntry = ERROR_CATALOGUE[error.code];
      expect(entry.status === 502, `${error.code}: a call failure answers 502`).toBe(error.callFailure);
      if (error.callFailure) expect(entry.exit).toBe(EXIT.workFailed);
    }
  });

  it('codes a record carries, those only the CLI raises, and what stands for a status', () => {
    for (const code of ['WORKER_LOST', 'OUTCOME_UNKNOWN', 'PLUGIN_REPORTED_FAILURE'] as const) {
      expect(ERROR_CATALOGUE[code]).toMatchObject({ exit: EXIT.workFailed });
      expect('status' in ERROR_CATALOGUE[code]).toBe(false);
    }
    expect(exitCodeOf('USAGE')).toBe(EXIT.badInput);
    expect(exitCodeOf('INTERRUPTED')).toBe(EXIT.interrupted);
    expect(httpStatusOf('REDIS_UNREACHABLE')).toBe(503);
    // A code a newer api sends that this CLI does not know: the exit its status stands for.
    expect(exitCodeOf('SOMETHING_NEW', 502)).toBe(EXIT.workFailed);
    expect(exitCodeOf('SOMETHING_NEW', 409)).toBe(EXIT.badInput);
    expect(codeForStatus(418)).toBe('INVALID_INPUT');
    expect(codeForStatus(599)).toBe('INTERNAL');
  });

  it('a problem document becomes the error whose exit status the catalogue gives its code', () => {
    const url = 'http://api.test';
    const cases: [Parameters<typeof problemError>[1], string, number][] = [
      [{ status: 401, code: 'TOKEN_EXPIRED', detail: 'old' }, 'TOKEN_EXPIRED', 4],
      [{ status: 401 }, 'UNAUTHENTICATED', 4],
      [{ status: 403, code: 'FORBIDDEN', requiredRole: 'admin' }, 'FORBIDDEN', 4],
      [{ status: 404, code: 'PLUGIN_NOT_FOUND' }, 'PLUGIN_NOT_FOUND', 2],
      [{ status: 409, code: 'TRUST_REQUIRED' }, 'TRUST_REQUIRED', 2],
      [{ status: 502, code: 'TIMEOUT' }, 'TIMEOUT', 1],
      [{ status: 500, code: 'INTERNAL' }, 'INTERNAL', 1],
      [{ status: 503, code: 'REDIS_UNREACHABLE' }, 'API_UNREACHABLE', 2],
      [{ status: 400 }, 'INVALID_INPUT', 2],
      [{ status: 502, code: 'SOMETHING_NEW' }, 'SOMETHING_NEW', 1],
    ];
    for (const [problem, code, exit] of cases) {
      const error = problemError(url, problem) as errors.SwitchyardError;
      expect(error, JSON.stringify(problem)).toBeInstanceOf(errors.SwitchyardError);
      expect(error.code, JSON.stringify(problem)).toBe(code);
      expect(exitCodeOf(error.code, error.httpStatus), JSON.stringify(problem)).toBe(exit);
    }
    expect(problemError(url, { status: 409, code: 'SOMETHING_NEW' })).toBeInstanceOf(RemoteProblemError);
  });

  it('no module spells a code as a string literal: it reads ERROR_CODES', () => {
    const codes = new Set(Object.keys(ERROR_CATALOGUE));
    // Column headings of tables the CLI prints, not codes.
    const headings = new Set(['src/cli/commands/inspect-batches.ts']);
    const found: string[] = [];
    for (const path of filesUnder(join(ROOT, 'src'))) {
      if (!/\.(ts|js|lua)$/.test(path) || path.endsWith('error-catalogue.ts')) continue;
      const relative = path.slice(ROOT.length);
      if (headings.has(relative)) continue;
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const match of line.matchAll(/['"`]([A-Z][A-Z_]+)['"`]/g))
            if (codes.has(match[1]!)) found.push(`${relative}:${index + 1}: ${line.trim()}`);
        });
    }
    expect(found, 'use ERROR_CODES.<CODE> (src/core/platform/error-catalogue.ts) instead').toEqual([]);
  });
});
