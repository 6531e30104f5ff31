// The exchange through the spawn helper (native/spawner.c): the call's last
// request goes with STDIN_LAST, and the helper closes the plugin's stdin the
// moment its stdout has given the last answer, with no frame from the host for
// it; frames wait at most a few milliseconds to leave together, so an answer or
// a stderr line of a plugin that lingers still reaches the host at once. THEN:
// a request the helper sends on its own the moment the plugin's first line is
// exactly the one expected (and never otherwise), saying so before that line.
import { describe, expect, it } from 'vitest';
import { containment } from '../../../src/core/supervision/containment.js';
import { HELPER_PATH, Spawner, type CallProcess } from '../../../src/core/supervision/spawner.js';

const built = containment().mechanism === 'subreaper';

async function start(spawner: Spawner, script: string) {
  const call = await spawner.spawn({ file: '/bin/sh', args: ['-c', script], cwd: '/', env: {} });
  let out = '';
  let err = '';
  call.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  call.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  await call.started;
  return Object.assign(call, { out: () => out, err: () => err });
}

function until(check: () => boolean, ms: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const look = () => {
      if (check()) return resolve(Date.now() - started);
      if (Date.now() - started > ms) return reject(new Error(`not within ${ms} ms`));
      setTimeout(look, 5);
    };
    look();
  });
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> {
  return Promise.race([
    promise,
    new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), ms)),
  ]);
}

describe.skipIf(!built)('the exchange through the spawn helper', () => {
  it('stdin closes after the last answer with no close from the host', async () => {
    const spawner = new Spawner(HELPER_PATH, () => {});
    // Answers two requests, then waits for the end of stdin: it exits only if stdin is closed.
    const call: CallProcess & { out: () => string; err: () => string } = await start(
      spawner,
      'read a; echo one; read b; echo two; cat >/dev/null; echo stdin-closed >&2',
    );
    call.stdin.write('first\n');
    await until(() => call.out() === 'one\n', 5_000);
    call.closeStdinAfterAnswers!(2);
    call.stdin.write('second\n');
    // Never call.stdin.end(): the helper closes it on the second answer line.
    expect(await within(call.exited, 5_000)).toEqual({ code: 0, signal: null });
    await call.end();
    expect(call.out()).toBe('one\ntwo\n');
    expect(call.err()).toBe('stdin-closed\n');
  });

  it('an answer and a stderr line reach the host at once while the plugin lingers', async () => {
    const spawner = new Spawner(HELPER_PATH, () => {});
    const call = await start(spawner, 'read a; echo answer; echo live >&2; sleep 5');
    call.closeStdinAfterAnswers!(1);
    call.stdin.write('request\n');
    // The plugin runs 5 s more: what it wrote must not wait for its end.
    const took = await until(() => call.out() === 'answer\n' && call.err() === 'live\n', 2_000);
    expect(took).toBeLessThan(2_000);
    await call.end();
  });

  it('THEN: on the exact first line the request goes to the plugin, and SENT comes before that line', async () => {
    const spawner = new Spawner(HELPER_PATH, () => {});
    const call = await start(
      spawner,
      'read a; echo "hello {\\"v\\": 1}"; read b; echo "got:$b"; cat >/dev/null; echo stdin-closed >&2',
    );
    let sentBeforeFirstLine: boolean | undefined;
    call.stdout.on('data', () => (sentBeforeFirstLine ??= call.sentAhead));
    call.sendAfterFirstLine!(Buffer.from('hello {"v": 1}'), Buffer.from('the method\n'), 2);
    call.stdin.write('initialize\n');
    // Nothing more from the host: the helper sends the request and closes stdin after the second line.
    expect(await within(call.exited, 5_000)).toEqual({ code: 0, signal: null });
    await call.end();
    expect(call.out()).toBe('hello {"v": 1}\ngot:the method\n');
    expect(call.err()).toBe('stdin-closed\n');
    expect(sentBeforeFirstLine).toBe(true);
  });

  // The first line the plugin writes, and the line THEN expects (an empty one is refused outright).
  for (const [title, line, expected] of [
    ['THEN: a first line that is one byte differs gets nothing sent', 'hellO', 'hello'],
    ['THEN: a first line that is longer gets nothing sent', 'hello!', 'hello'],
    ['THEN: a first line that is shorter gets nothing sent', 'hell', 'hello'],
    ['THEN: a first line that is empty gets nothing sent', '', 'hello'],
    ['THEN with an empty line to expect is refused: an empty first line gets nothing sent', '', ''],
  ] as const) {
    it(title, async () => {
      const spawner = new Spawner(HELPER_PATH, () => {});
      const call = await start(spawner, `read a; echo "${line}"; read b; echo "second:$b" >&2`);
      call.sendAfterFirstLine!(Buffer.from(expected), Buffer.from('the method\n'), 2);
      call.stdin.write('initialize\n');
      await until(() => call.out() === `${line}\n`, 5_000);
      expect(call.sentAhead).toBe(false);
      // The plugin's second read sees the end of stdin, not the request.
      call.stdin.end();
      expect(await within(call.exited, 5_000)).toEqual({ code: 0, signal: null });
      await call.end();
      expect(call.err()).toBe('second:\n');
    });
  }

  it('an empty write to stdin changes nothing: the helper and the call go on', async () => {
    const spawner = new Spawner(HELPER_PATH, () => {});
    const call = await start(spawner, 'read a; read b; echo "got:$a:$b"');
    call.stdin.write('one\n');
    await new Promise((resolve) => setTimeout(resolve, 50)); // the first write has left
    call.stdin.write('');
    call.stdin.write('two\n');
    call.stdin.end();
    expect(await within(call.exited, 5_000)).toEqual({ code: 0, signal: null });
    await call.end();
    expect(call.out()).toBe('got:one:two\n');
    expect(spawner.exitMessage).toBeUndefined();
  });
});
