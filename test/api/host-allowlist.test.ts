// DNS rebinding against the unauthenticated routes: a page whose name the
// attacker re-points at the api's address sends `Host: <its own name>`.
// /healthz and /metrics answer only a Host that names this api (an IP literal,
// a loopback name, the bind host, an --allowed-host); /api/v1 needs a token anyway.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpApi, startApi, type Api, type ApiSetup } from './support.js';

let setup: ApiSetup;
let allowing: Api;
beforeAll(async () => {
  setup = await setUpApi('host-allowlist');
  allowing = await startApi(setup.installation, ['--allowed-host', 'Switchyard.Internal']);
});
afterAll(async () => {
  await setup?.close();
});

/** GET `path` on 127.0.0.1:`port` with exactly this Host header. */
function getWithHost(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the unauthenticated routes and the Host header', () => {
  for (const path of ['/healthz', '/metrics']) {
    it(`${path}: a rebinding name is refused 421 HOST_NOT_ALLOWED, naming --allowed-host`, async () => {
      const { port } = setup.api;
      const answer = await getWithHost(port, path, `rebind.attacker.example:${port}`);
      expect(answer.status).toBe(421);
      const problem = JSON.parse(answer.body) as { code: string; detail: string };
      expect(problem.code).toBe('HOST_NOT_ALLOWED');
      expect(problem.detail).toContain('--allowed-host rebind.attacker.example');
      expect(answer.body).not.toMatch(/fixture-inspector|switchyard_/);
    });

    it(`${path}: IP literals and loopback names are answered`, async () => {
      const { port } = setup.api;
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `10.1.2.3:${port}`]) {
        const answer = await getWithHost(port, path, host);
        expect([200, 503], host).toContain(answer.status);
      }
    });
  }

  it('an --allowed-host name is answered (case-insensitive), others still refused', async () => {
    const { port } = allowing;
    expect([200, 503]).toContain((await getWithHost(port, '/healthz', `switchyard.internal:${port}`)).status);
    expect([200, 503]).toContain((await getWithHost(port, '/metrics', 'SWITCHYARD.internal')).status);
    expect((await getWithHost(port, '/metrics', `other.internal:${port}`)).status).toBe(421);
  });
});
