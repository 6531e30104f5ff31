// What runs on the hosts of the multi-host suite: a TLS redis-server with an
// ACL user (certificates made here with openssl), switchyard processes from
// dist/cli/main.js, and a small HTTP client that lives on the api host.
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { CLI } from '../support/cli-process.js';
import { waitFor } from '../support/wait.js';
import type { Host, Mount } from './netns.js';

const run = promisify(execFile);

export const REDIS_TLS_PORT = 6380;
export const REDIS_USER = 'switchyard';

export interface Certificates {
  ca: string;
  cert: string;
  key: string;
}

/** A CA and a server certificate for `address` (IP SAN), EC P-256, valid 2 days. */
export async function makeCertificates(dir: string, address: string): Promise<Certificates> {
  const path = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=switchyard-test-ca',
  ]);
  await run('openssl', [
    'req',
    ...ec,
    '-keyout',
    path('redis.key'),
    '-out',
    path('redis.csr'),
    '-subj',
    '/CN=redis',
  ]);
  await writeFile(path('san.ext'), `subjectAltName=IP:${address},DNS:redis\n`);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    path('redis.csr'),
    '-CA',
    path('ca.pem'),
    '-CAkey',
    path('ca.key'),
    '-CAcreateserial',
    '-out',
    path('redis.pem'),
    '-days',
    '2',
    '-extfile',
    path('san.ext'),
  ]);
  return { ca: path('ca.pem'), cert: path('redis.pem'), key: path('redis.key') };
}

export interface HostProcess {
  host: string;
  child: ChildProcess;
  pid: number;
  output(): string;
  /** Resolves once the output holds `text`. */
  until(text: string, timeoutMs?: number): Promise<void>;
  running(): boolean;
  kill9(): Promise<void>;
}

export function watchProcess(host: string, child: ChildProcess): HostProcess {
  let output = '';
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  for (const stream of [child.stdout!, child.stderr!])
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (output.length > 400_000) output = output.slice(-200_000);
    });
  return {
    host,
    child,
    pid: child.pid!,
    output: () => output,
    running: () => !exited,
    async until(text, timeoutMs = 30_000) {
      await waitFor(
        `${host} to print ${text}`,
        async () => {
          if (output.includes(text)) return true;
          if (exited) throw new Error(`${host} exited before printing ${text}:\n${output}`);
          return false;
        },
        timeoutMs,
        50,
      );
    },
    async kill9() {
      if (!exited) child.kill('SIGKILL');
      await exit;
    },
  };
}

/** redis-server on the host: TLS only (no plain port), the default user off, one ACL user. */
export async function startTlsRedis(
  host: Host,
  dir: string,
  certs: Certificates,
  password: string,
): Promise<HostProcess> {
  const config = join(dir, 'redis.conf');
  await writeFile(
    config,
    [
      `bind ${host.address}`,
      'port 0',
      `tls-port ${REDIS_TLS_PORT}`,
      `tls-cert-file ${certs.cert}`,
      `tls-key-file ${certs.key}`,
      `tls-ca-cert-file ${certs.ca}`,
      'tls-auth-clients no',
      `dir ${dir}`,
      'appendonly yes',
      'appendfsync everysec',
      'save ""',
      'user default off',
      `user ${REDIS_USER} on >${password} ~* &* +@all`,
      '',
    ].join('\n'),
  );
  const redis = watchProcess(host.name, host.spawn('redis-server', [config]));
  await redis.until('Ready to accept connections', 15_000);
  return redis;
}

export interface Switchyard {
  dataDir: string;
  redisUrl: string;
  prefix: string;
  env: NodeJS.ProcessEnv;
}

/** `switchyard <args>` on the host, its data dir mounted at the shared path. */
export function startSwitchyard(
  host: Host,
  hostDataDir: string,
  target: Switchyard,
  args: string[],
): HostProcess {
  const mount: Mount = { hostDir: hostDataDir, at: target.dataDir };
  const child = host.spawn(
    process.execPath,
    [CLI, '--data-dir', target.dataDir, '--redis-url', target.redisUrl, '--prefix', target.prefix, ...args],
    { env: target.env, mount },
  );
  return watchProcess(host.name, child);
}

/** One CLI command on the host; rejects on a non-zero exit. */
export async function cliOn(
  host: Host,
  hostDataDir: string,
  target: Switchyard,
  args: string[],
): Promise<string> {
  const proc = startSwitchyard(host, hostDataDir, target, args);
  const status = await new Promise<number | null>((resolve) => proc.child.once('close', resolve));
  if (status !== 0)
    throw new Error(`switchyard ${args.join(' ')} on ${host.name} exited ${status}:\n${proc.output()}`);
  return proc.output();
}

export interface HttpAnswer {
  status: number;
  body: unknown;
}

/** A node process on `host` that sends the requests it is given and answers each; survives api restarts. */
export function httpClientOn(host: Host, baseUrl: string, token: string) {
  const script = `
    const rl = require('node:readline').createInterface({ input: process.stdin });
    rl.on('line', async (line) => {
      const { id, method, path, body } = JSON.parse(line);
      try {
        const response = await fetch(${JSON.stringify(baseUrl)} + path, {
          method, headers: { authorization: 'Bearer ${token}', ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined, signal: AbortSignal.timeout(10000) });
        const text = await response.text();
        process.stdout.write(JSON.stringify({ id, status: response.status, body: text ? JSON.parse(text) : null }) + '\\n');
      } catch (error) {
        process.stdout.write(JSON.stringify({ id, error: String(error.cause?.code ?? error.message) }) + '\\n');
      }
    });`;
  return new HttpClient(host.spawn(process.execPath, ['-e', script], { stdin: true }));
}

class HttpClient {
  readonly #pending = new Map<number, (answer: HttpAnswer | { error: string }) => void>();
  #next = 0;

  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const answer = JSON.parse(line) as { id: number } & (HttpAnswer | { error: string });
      this.#pending.get(answer.id)?.(answer);
      this.#pending.delete(answer.id);
    });
  }

  /** The answer, or `{ error }` when the api cannot be reached (e.g. while it restarts). */
  request(method: string, path: string, body?: unknown): Promise<HttpAnswer | { error: string }> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.child.stdin!.write(`${JSON.stringify({ id, method, path, body })}\n`);
    });
  }

  close(): void {
    this.child.kill('SIGKILL');
  }
}
