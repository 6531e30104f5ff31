// The api over HTTPS (--tls-cert/--tls-key) is the same server as over plain
// HTTP: security headers, problem documents with a code, even for a URL the
// router cannot decode (a separately built HTTPS instance once missed that).
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { globalArgs, setUpApi, spawnCli, type ApiSetup } from './support.js';

let setup: ApiSetup | undefined;
let port = 0;
let ca: Buffer;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(path: string, token?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        ca,
        servername: 'localhost',
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  setup = await setUpApi('api-tls');
  const cert = join(setup.root, 'cert.pem');
  const key = join(setup.root, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost'].concat([
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ]),
    { stdio: 'ignore' },
  );
  ca = await readFile(cert);
  port = await freePort();
  const proc = spawnCli([
    ...globalArgs(setup.installation),
    'api',
    '--port',
    String(port),
    '--tls-cert',
    cert,
    '--tls-key',
    key,
  ]);
  await waitFor(
    'the HTTPS api to answer /healthz',
    async () => {
      if (!proc.running()) throw new Error(`api exited early:\n${proc.output()}`);
      try {
        return (await get('/healthz')).status > 0;
      } catch {
        return false;
      }
    },
    20_000,
  );
}, 60_000);

afterAll(async () => {
  await setup?.close();
});

describe('the api over HTTPS', () => {
  it('serves the API with its token and its security headers', async () => {
    const answer = await get('/api/v1/me', setup!.api.adminToken);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ role: 'admin' });
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers a URL the router cannot decode with a problem document and its code', async () => {
    const answer = await get('/api/v1/plugins/%zz', setup!.api.adminToken);
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 400, code: 'BAD_URL' });
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });
});
