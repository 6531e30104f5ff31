// Remote mode against a broken or hostile API (a tiny node:http server here):
// an event stream that never ends an event must not fill the CLI's memory, an
// answer that is no event stream must not be asked again every 250 ms forever,
// and counts the server sends must not carry terminal escapes to the screen.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_EVENT_CHARS, serverEvents } from '../../src/cli/event-stream.js';
import { ApiUnreachableError } from '../../src/cli/cli-errors.js';
import { ApiClient, MAX_ANSWER_BYTES } from '../../src/cli/http.js';
import { exportedText } from '../../src/cli/commands/batch-commands.js';
import { completableIds } from '../../src/cli/commands/completion.js';
import { CLI, requireBuiltCli } from '../support/cli-process.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

let server: Server | undefined;
let configHome: string;

beforeAll(() => {
  requireBuiltCli();
  configHome = mkdtempSync(join(tmpdir(), 'sy-hostile-'));
});
afterAll(() => rmSync(configHome, { recursive: true, force: true }));
afterEach(async () => {
  const running = server;
  server = undefined;
  if (!running) return;
  running.closeAllConnections();
  await new Promise((resolve) => running.close(resolve));
});

async function hostileApi(handler: Handler): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Writes `piece` again and again (minding backpressure) until the client leaves or `cap` characters went out. */
function writeEndlessly(response: ServerResponse, piece: string, cap: number): void {
  let sent = 0;
  const more = () => {
    while (sent < cap && !response.destroyed) {
      sent += piece.length;
      if (!response.write(piece)) return void response.once('drain', more);
    }
    response.end();
  };
  more();
}

/** Runs the built CLI in remote mode against `url`, with `env` added; what it printed and its exit status. */
function cliAgainst(url: string, args: string[], env: Record<string, string> = {}, viaPty = false) {
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('SWITCHYARD_') && key !== 'FORCE_COLOR') childEnv[key] = value;
  Object.assign(childEnv, {
    NO_COLOR: '1',
    XDG_CONFIG_HOME: configHome,
    SWITCHYARD_URL: url,
    SWITCHYARD_TOKEN: 'sy_test_token',
    ...env,
  });
  const command = viaPty ? 'script' : process.execPath;
  // `script` gives the CLI a terminal (stdout and stderr are TTYs), as a user's shell does.
  const commandArgs = viaPty
    ? ['-qefc', [process.execPath, CLI, ...args].map((arg) => `'${arg}'`).join(' '), '/dev/null']
    : [CLI, ...args];
  const child = spawn(command, commandArgs, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const started = performance.now();
  // A CLI that would wait forever is stopped, so the test fails instead of hanging.
  const stop = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise<{ code: number | null; output: string; ms: number }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(stop);
      resolve({ code, output, ms: performance.now() - started });
    }),
  );
}

describe('the event stream reader against a server that never ends an event', () => {
  // Each server stops after 32 Mi characters (4× the bound), so a reader without one ends (wrongly) instead of running forever.
  const cap = 32 * 1024 * 1024;

  it.each([
    ['one `data:` line that never ends', 'AAAAAAAA'.repeat(8 * 1024), 'data: '],
    ['`data:` lines that never end in a blank line', 'data: AAAAAAAAAAAAAAAA\n'.repeat(4 * 1024), ''],
  ])(
    '%s: fails with the bound named, promptly',
    async (_name, piece, opening) => {
      const url = await hostileApi((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(opening);
        writeEndlessly(response, piece, cap);
      });
      const api = new ApiClient(url, 'sy_test_token');
      const started = performance.now();
      const reading = (async () => {
        const body = await api.stream('/batches/b/events', { accept: 'text/event-stream' });
        for await (const _event of serverEvents(body, { url })) void _event;
      })();
      await expect(reading).rejects.toThrow(ApiUnreachableError);
      await expect(reading).rejects.toThrow(`the API at ${url} sent`);
      await expect(reading).rejects.toThrow(`longer than ${MAX_EVENT_CHARS} characters`);
      expect(performance.now() - started).toBeLessThan(10_000);
    },
    30_000,
  );
});

describe('a legitimate event over the bound', () => {
  it('op wait whose `done` outgrows the reader bound ends with the state a GET reads', async () => {
    const operation = {
      id: 'op_big',
      pluginId: 'p',
      projectId: 'x',
      action: 'a',
      state: 'succeeded',
      requestedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
      summary: 'done',
    };
    const url = await hostileApi((request, response) => {
      if (request.url === '/api/v1/operations/op_big') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(operation));
        return;
      }
      // A `done` event just over the bound (as a finished batch with many results could be).
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const padding = 'x'.repeat(MAX_EVENT_CHARS + 1024);
      response.end(`event: done\ndata: ${JSON.stringify({ ...operation, padding })}\n\n`);
    });
    const run = await cliAgainst(url, ['--json', 'op', 'wait', 'op_big'], {
      SWITCHYARD_WAIT_GIVE_UP_MS: '3000',
    });
    expect(run.code, run.output.slice(0, 500)).toBe(0);
    expect(JSON.parse(run.output)).toMatchObject({ id: 'op_big', state: 'succeeded' });
  }, 30_000);
});

describe('a wait against an api that answers no event stream', () => {
  it('op wait gives up with a clear message instead of asking again every 250 ms forever', async () => {
    let streamsAsked = 0;
    const url = await hostileApi((request, response) => {
      if (request.url === '/api/v1/operations/op_1') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            id: 'op_1',
            pluginId: 'p',
            projectId: 'x',
            action: 'a',
            state: 'running',
            requestedAt: new Date().toISOString(),
          }),
        );
        return;
      }
      if (request.url?.endsWith('/events')) streamsAsked++;
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html><body>Sign in to the guest network</body></html>');
    });
    const giveUpMs = 2_000;
    const run = await cliAgainst(url, ['op', 'wait', 'op_1'], {
      SWITCHYARD_WAIT_GIVE_UP_MS: String(giveUpMs),
    });
    expect(run.code, run.output).toBe(2);
    expect(run.output).toContain(`the API at ${url} answered /operations/op_1/events with "text/html"`);
    expect(run.output).toContain('not text/event-stream');
    expect(run.ms).toBeLessThan(giveUpMs + 10_000);
    // Backing off: 250, 500, 1000 ms… not one request every 250 ms.
    expect(streamsAsked).toBeLessThanOrEqual(5);
  }, 30_000);

  it('a 200 that is not JSON fails as the api misbehaving, not as a missing field', async () => {
    const url = await hostileApi((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html></html>');
    });
    const run = await cliAgainst(url, ['op', 'wait', 'op_1']);
    expect(run.code, run.output).toBe(2);
    expect(run.output).toContain(
      `the API at ${url} answered GET /operations/op_1 with "text/html", not JSON`,
    );
    expect(run.output).not.toMatch(/TypeError|Cannot read properties/);
  }, 30_000);
});

describe('answers that do not fit the contract', () => {
  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };

  it.each([
    ['no fields at all', {}, 'id: Invalid input: expected string, received undefined'],
    ['a number for the name, an unknown role', { id: 't', name: 7, role: 'root' }, 'name: Invalid input'],
    ['an array', [], 'the body: Invalid input: expected object, received array'],
  ])(
    'whoami against a /me with %s exits 2 naming the route and the field',
    async (_name, me, field) => {
      const url = await hostileApi((_request, response) => json(response, 200, me));
      const run = await cliAgainst(url, ['whoami']);
      expect(run.code, run.output).toBe(2);
      expect(run.output).toContain(`the API at ${url} answered GET /me with a body this CLI cannot use (`);
      expect(run.output).toContain(field);
      expect(run.output).not.toMatch(/undefined \(undefined\)|TypeError|Cannot read properties/);
    },
    30_000,
  );

  it('plugin list against a list whose items lack fields names the item and the field', async () => {
    const url = await hostileApi((_request, response) => json(response, 200, [{ id: 'p' }]));
    const run = await cliAgainst(url, ['plugin', 'list']);
    expect(run.code, run.output).toBe(2);
    expect(run.output).toContain('answered GET /plugins with a body this CLI cannot use (0.name: ');
    expect(run.output).toContain('; and ');
    expect(run.output).not.toMatch(/TypeError|Cannot read properties/);
  }, 30_000);

  it('token revoke reads the removed token from the DELETE answer, by name, without listing every token', async () => {
    const asked: string[] = [];
    const url = await hostileApi((request, response) => {
      asked.push(`${request.method} ${request.url}`);
      if (request.method === 'DELETE' && request.url === '/api/v1/tokens/eve')
        return json(response, 200, {
          id: 'tok1',
          name: 'eve',
          role: 'operator',
          createdAt: new Date().toISOString(),
          createdBy: 'token:admin',
          revoked: true,
        });
      json(response, 404, { status: 404, detail: 'no such thing' });
    });
    const run = await cliAgainst(url, ['--json', 'token', 'revoke', 'eve']);
    expect(run.code, run.output).toBe(0);
    expect(JSON.parse(run.output)).toMatchObject({ id: 'tok1', name: 'eve' });
    expect(asked).toEqual(['DELETE /api/v1/tokens/eve']);
  }, 30_000);

  it('op wait whose `done` event does not fit fails at once, naming the event and the field', async () => {
    const running = {
      id: 'op_1',
      pluginId: 'p',
      projectId: 'x',
      action: 'a',
      state: 'running',
      requestedAt: new Date().toISOString(),
    };
    const url = await hostileApi((request, response) => {
      if (request.url === '/api/v1/operations/op_1') return json(response, 200, running);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(`event: done\ndata: ${JSON.stringify({ ...running, state: 'nonsense' })}\n\n`);
    });
    const run = await cliAgainst(url, ['op', 'wait', 'op_1'], { SWITCHYARD_WAIT_GIVE_UP_MS: '60000' });
    expect(run.code, run.output).toBe(2);
    expect(run.output).toContain(
      'answered a `done` event on /operations/op_1/events with a body this CLI cannot use',
    );
    expect(run.output).toContain('state: ');
    // Not asked again until the give-up: the same answer would not fit either.
    expect(run.ms).toBeLessThan(10_000);
  }, 30_000);
});

describe('a plain answer without end', () => {
  it('whoami against a /me of 300 MiB fails promptly, naming the bound, having read little of it', async () => {
    const cap = 300 * 1024 * 1024;
    let sent = 0;
    const url = await hostileApi((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"id":"');
      const piece = 'A'.repeat(64 * 1024);
      const more = () => {
        while (sent < cap && !response.destroyed) {
          sent += piece.length;
          if (!response.write(piece)) return void response.once('drain', more);
        }
        response.end('"}');
      };
      more();
    });
    const run = await cliAgainst(url, ['whoami']);
    expect(run.code, run.output.slice(0, 500)).toBe(2);
    expect(run.output).toContain(
      `the API at ${url} answered GET /me with more than ${MAX_ANSWER_BYTES} bytes`,
    );
    expect(run.output.length).toBeLessThan(2_000);
    expect(run.ms).toBeLessThan(10_000);
    // The CLI stopped reading at the bound: the server got rid of little more than that.
    expect(sent).toBeLessThan(4 * MAX_ANSWER_BYTES);
  }, 30_000);
});

describe('counts from the server on a terminal', () => {
  it('a batch whose failed count is a string with escapes: the progress bar prints no raw ESC of it', async () => {
    const injected = '\u001b]0;pwned\u0007\u001b[2J';
    const view = {
      batchId: 'batch_2',
      pluginId: 'p',
      state: 'running',
      total: 2,
      succeeded: 0,
      failed: 0,
      cancelled: 0,
      pending: 2,
      createdAt: new Date().toISOString(),
      createdBy: 'token:x',
    };
    const url = await hostileApi((request, response) => {
      if (request.method === 'POST' && request.url === '/api/v1/batches/batch_1/retry') {
        response.writeHead(201, { 'content-type': 'application/json' });
        response.end(JSON.stringify(view));
        return;
      }
      if (request.url === '/api/v1/batches/batch_2/events') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(
          `event: progress\ndata: ${JSON.stringify({ ...view, succeeded: 1, failed: injected })}\n\n`,
        );
        // Long enough for the bar to draw the progress before the end.
        setTimeout(() => {
          const done = { ...view, state: 'succeeded', succeeded: 2, pending: 0, results: [] };
          response.end(`event: done\ndata: ${JSON.stringify(done)}\n\n`);
        }, 600);
        return;
      }
      response.writeHead(404, { 'content-type': 'application/problem+json' });
      response.end(JSON.stringify({ status: 404, detail: 'no such thing' }));
    });
    const run = await cliAgainst(url, ['batch', 'retry', 'batch_1'], {}, true);
    expect(run.code, run.output).toBe(0);
    // The bar drew (a terminal), and with a number where the server sent text.
    expect(run.output).toMatch(/\| 0 failed \|/);
    expect(run.output).not.toContain('\u001b]0;pwned');
    expect(run.output).not.toContain('\u001b[2J');
  }, 30_000);
});

describe('batch export on a terminal', () => {
  const chunk = 'batch_1,proj,succeeded,f,Label,"v\u001b[31mred\u009b2J\u202e",src,,,\nnext line\n';

  it('piped or redirected: the bytes as they are (export output is data)', () => {
    expect(exportedText(chunk, false)).toBe(chunk);
  });

  it('on a terminal: control characters (ESC, C1, bidi) shown as escapes, line breaks kept', () => {
    const shown = exportedText(chunk, true);
    expect(shown).toBe('batch_1,proj,succeeded,f,Label,"v\\x1b[31mred\\x9b2J\\u202e",src,,,\nnext line\n');
  });
});

describe('shell completion of ids the server sent', () => {
  it('leaves out ids with control characters (a line break, ESC, C1, bidi); keeps the rest whole', () => {
    expect(
      completableIds(['web', 'evil\n--force', 'x\u001b]0;t\u0007', 'y\u009b2J', 'z\u202e', 'ünï-côde']),
    ).toEqual(['web\n', 'ünï-côde\n']);
  });
});
