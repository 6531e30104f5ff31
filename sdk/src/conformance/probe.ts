// One plugin process started exactly as a host starts it (argument array,
// package directory as cwd, minimal environment, own process group), with a
// raw line interface so the kit can also send what a host never would.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { MAX_MESSAGE_BYTES } from '../constants.js';
import { pluginEnvironment } from '../environment.js';
import { LineSplitter, type LineEvent } from '../lines.js';
import { readResponse, type Reply } from '../responses.js';

export type { Reply };

const STDERR_TAIL = 2_048;

export class Probe {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #splitter = new LineSplitter(MAX_MESSAGE_BYTES);
  readonly #events: (LineEvent | 'end')[] = [];
  #wake: (() => void) | undefined;
  #stderr = '';
  #exit: Promise<void>;
  #exited = false;
  #errorsWithResult = 0;
  readonly #timeoutMs: number;

  constructor(executable: string, args: string[], cwd: string, timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    this.#child = spawn(executable, args, {
      cwd,
      env: pluginEnvironment(),
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.#child.stdin.on('error', () => {});
    this.#child.on('error', (error) => {
      this.#stderr += `spawn failed: ${error.message}`;
      this.#push('end');
    });
    this.#child.stdout.on('data', (chunk: Buffer) => {
      for (const event of this.#splitter.push(chunk)) this.#push(event);
    });
    this.#child.stdout.on('end', () => {
      for (const event of this.#splitter.end()) this.#push(event);
      this.#push('end');
    });
    this.#child.stderr.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    this.#exit = new Promise((resolve) =>
      this.#child.on('close', () => {
        this.#exited = true;
        resolve();
      }),
    );
  }

  /** Error responses so far that also carried `result` (as the Go SDK answers). */
  get errorsWithResult(): number {
    return this.#errorsWithResult;
  }

  get stderrTail(): string {
    return this.#stderr.trim();
  }

  send(line: string): void {
    this.#child.stdin.write(`${line}\n`);
  }

  async call(id: number, method: string, params: unknown): Promise<Reply> {
    this.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return this.receive();
  }

  /** The next response line, interpreted strictly. */
  async receive(): Promise<Reply> {
    const event = await this.#nextEvent();
    if (event === 'timeout') return { kind: 'invalid', reason: `no response within ${this.#timeoutMs} ms` };
    if (event === 'end') {
      const tail = this.stderrTail;
      return {
        kind: 'invalid',
        reason: `the plugin closed stdout without answering${tail ? ` (stderr: ${tail.slice(-300)})` : ''}`,
      };
    }
    if (event.kind === 'oversized')
      return { kind: 'invalid', reason: `response line exceeds ${MAX_MESSAGE_BYTES} bytes` };
    const reply = readResponse(event.bytes);
    if (reply.kind === 'error' && reply.withResult) this.#errorsWithResult += 1;
    return reply;
  }

  /** Closes stdin, waits up to `graceMs` for exit, then kills the process group. */
  async stop(graceMs = 3_000): Promise<{ exitedOnItsOwn: boolean }> {
    this.#child.stdin.end();
    const exited = await Promise.race([
      this.#exit.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs).unref()),
    ]);
    this.#killGroup();
    if (!this.#exited) await this.#exit;
    return { exitedOnItsOwn: exited };
  }

  #killGroup(): void {
    const pid = this.#child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // the group is already gone
    }
  }

  #push(event: LineEvent | 'end'): void {
    if (event === 'end' && this.#events.includes('end')) return;
    this.#events.push(event);
    this.#wake?.();
  }

  async #nextEvent(): Promise<LineEvent | 'end' | 'timeout'> {
    const deadline = Date.now() + this.#timeoutMs;
    while (this.#events.length === 0) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return 'timeout';
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
    const event = this.#events[0]!;
    if (event !== 'end') this.#events.shift();
    return event;
  }
}
