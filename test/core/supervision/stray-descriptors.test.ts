// The process-group fallback (PROTOCOL §9.5) passes no stray descriptor on: a
// worker that inherited a pipe without close-on-exec (fd 251 of the shell that
// started `up`, in the wild) must not hand it to the plugin. A real process
// holds such a descriptor at fd 250 (opened by a shell) and starts a real call
// through the fallback.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../support/data-dir.js';

const CONTAINMENT = join(REPO, 'dist', 'core', 'supervision', 'containment.js');

/** A node process with a stray fd 250 that starts `ls -l /proc/self/fd` as a call; what the call saw. */
function descriptorsOfACall(): Promise<{ parent: string; call: string }> {
  const script = `
    import { readlinkSync } from 'node:fs';
    const { startCallProcess } = await import(${JSON.stringify(CONTAINMENT)});
    const call = await startCallProcess({ file: '/bin/sh', args: ['-c', 'ls -l /proc/self/fd'], cwd: '/', env: { PATH: process.env.PATH } });
    await call.started;
    call.stdin.end();
    let out = '';
    call.stdout.on('data', (chunk) => (out += chunk));
    await call.exited;
    await call.end();
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.stdout.write(JSON.stringify({ parent: readlinkSync('/proc/self/fd/250'), call: out }));
    process.exit(0);
  `;
  return new Promise((resolve, reject) => {
    // A shell opens fd 250 for it without close-on-exec, as a shell does for what it starts.
    const child = spawn(
      'bash',
      ['-c', 'exec "$@" 250<"$STRAY"', 'bash', process.execPath, '--input-type=module', '-e', script],
      {
        env: { ...process.env, SWITCHYARD_SPAWNER: 'process-group', STRAY: CONTAINMENT },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('close', () => {
      try {
        resolve(JSON.parse(out) as { parent: string; call: string });
      } catch {
        reject(new Error(`no answer: ${out}`));
      }
    });
  });
}

describe('the process-group fallback', () => {
  it('a plugin does not inherit a descriptor its worker inherited without close-on-exec', async () => {
    const { parent, call } = await descriptorsOfACall();
    expect(parent).toBe(CONTAINMENT);
    expect(call).toContain(' 0 -> ');
    expect(call).not.toContain(CONTAINMENT);
  }, 30_000);
});
