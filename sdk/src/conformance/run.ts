// runConformance(): starts a package's real executable the way a host does and
// checks every rule of switchyard.plugin/v1 a plugin is responsible for. It
// knows nothing about the language the plugin is written in.
//
// Two levels. `required`: what a host needs; a plugin built with either the
// TypeScript or the Go SDK passes them. `strict`: the TypeScript SDK's extra
// strictness (things no host sends or needs); a failed strict check is a
// warning, or a failure with the `strict` option.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseManifest } from '../manifest.js';
import { checkExecutable, readManifestBytes } from '../package-files.js';
import type { Manifest } from '../schemas.js';
import { CheckSkipped, runProtocolChecks, type CheckLevel, type Runner } from './checks.js';

export type { CheckLevel };

export interface ConformanceCheck {
  name: string;
  level: CheckLevel;
  /** `warn`: a strict check failed without the `strict` option. */
  status: 'pass' | 'fail' | 'warn' | 'skip';
  detail?: string;
}

export interface ConformanceReport {
  ok: boolean;
  plugin?: { id: string; version: string };
  checks: ConformanceCheck[];
}

export interface ConformanceOptions {
  /** How long to wait for each response line. */
  timeoutMs?: number;
  /** Called as each check finishes, for live output. */
  onCheck?: (check: ConformanceCheck) => void;
  /** Strict checks fail instead of warning. */
  strict?: boolean;
  /**
   * The action that the operate check runs for real, with input `{}`; it must be one
   * project.inspect lists. Default: the first listed whose risk is `none` (the check
   * is skipped when there is none).
   */
  action?: string;
}

export async function runConformance(
  packageDirectory: string,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  const packageDir = resolve(packageDirectory);
  const timeoutMs = options.timeoutMs ?? 5_000;
  const checks: ConformanceCheck[] = [];
  const record = (check: ConformanceCheck) => {
    checks.push(check);
    options.onCheck?.(check);
  };
  const run: Runner = async (name, body, level = 'required') => {
    try {
      await body();
      record({ name, level, status: 'pass' });
    } catch (error) {
      if (error instanceof CheckSkipped) {
        record({ name, level, status: 'skip', detail: error.message });
        return;
      }
      const status = level === 'strict' && !options.strict ? 'warn' : 'fail';
      record({ name, level, status, detail: error instanceof Error ? error.message : String(error) });
    }
  };

  const manifest = await loadManifest(packageDir, record);
  if (!manifest) return { ok: false, checks };
  const executable = await checkExecutable(packageDir, manifest.executable);
  if (!executable.ok) {
    record({
      name: 'executable follows the package rules',
      level: 'required',
      status: 'fail',
      detail: executable.error,
    });
    return { ok: false, plugin: { id: manifest.id, version: manifest.version }, checks };
  }
  record({ name: 'executable follows the package rules', level: 'required', status: 'pass' });

  const projectRoot = await mkdtemp(join(tmpdir(), 'switchyard-conformance-'));
  try {
    await runProtocolChecks(
      manifest,
      packageDir,
      executable.path,
      projectRoot,
      { timeoutMs, action: options.action },
      run,
    );
  } finally {
    await rm(projectRoot, { recursive: true, force: true });
  }
  return {
    ok: checks.every((check) => check.status !== 'fail'),
    plugin: { id: manifest.id, version: manifest.version },
    checks,
  };
}

async function loadManifest(
  packageDir: string,
  record: (check: ConformanceCheck) => void,
): Promise<Manifest | undefined> {
  const name = 'plugin.json is a valid manifest';
  let bytes: Buffer | undefined;
  try {
    bytes = await readManifestBytes(join(packageDir, 'plugin.json'));
  } catch (error) {
    record({
      name,
      level: 'required',
      status: 'fail',
      detail: `cannot read plugin.json: ${(error as Error).message}`,
    });
    return undefined;
  }
  if (!bytes) {
    record({
      name,
      level: 'required',
      status: 'fail',
      detail: `cannot read plugin.json: there is none in ${packageDir}`,
    });
    return undefined;
  }
  const parsed = parseManifest(bytes);
  if (!parsed.ok) {
    record({ name, level: 'required', status: 'fail', detail: parsed.errors.join('; ') });
    return undefined;
  }
  record({ name, level: 'required', status: 'pass' });
  return parsed.manifest;
}
