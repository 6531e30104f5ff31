// The docker-compose deployment, checked without a Docker engine: the file is
// parsed (YAML, merge keys as compose reads them) and its services, images,
// commands, environment and volumes are checked; every option a service
// passes to the CLI must exist in that command's `--help` of the built CLI.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO } from '../support/data-dir.js';

interface Service {
  image?: string;
  build?: string | { context?: string };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string> | string[];
  volumes?: (string | { type?: string; source?: string; target?: string; read_only?: boolean })[];
  ports?: (string | number | { target?: number })[];
  container_name?: string;
  depends_on?: string[] | Record<string, unknown>;
  deploy?: { replicas?: number };
  healthcheck?: { test?: string | string[] };
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const SWITCHYARD_SERVICES = ['api', 'worker', 'scheduler'] as const;

let compose: Compose;

beforeAll(() => {
  compose = parse(readFileSync(join(REPO, 'docker-compose.yml'), 'utf8'), { merge: true }) as Compose;
});

/**
 * Compose interpolation with only `given` set: `${VAR:-default}` → default,
 * `${VAR:?message}` → the given value (compose refuses to start without it),
 * `${VAR:+alt}` and `${VAR}` → ''. Nested forms resolve from the inside out.
 */
function withDefaults(value: string, given: Record<string, string> = {}): string {
  const innermost = /\$\{([A-Z0-9_]+)(?:(:?[-?+])([^{}]*))?\}/g;
  return value
    .split('$$')
    .map((part) => {
      for (let before = ''; before !== part;) {
        before = part;
        part = part.replace(innermost, (_, name: string, operator: string | undefined, rest: string) => {
          if (given[name] !== undefined) return operator?.endsWith('+') ? rest : given[name];
          if (operator?.endsWith('?')) throw new Error(`${name} is required: ${rest}`);
          return operator?.endsWith('-') ? rest : '';
        });
      }
      return part;
    })
    .join('$');
}

/** What a user must set (docker-compose.yml's header). */
const REQUIRED = { REDIS_PASSWORD: 'pw-from-env' };

function envOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env))
    return Object.fromEntries(
      env.map((entry) => [entry.split('=')[0]!, entry.split('=').slice(1).join('=')]),
    );
  return Object.fromEntries(Object.entries(env).map(([key, value]) => [key, String(value)]));
}

function commandOf(service: Service): string[] {
  const command = service.command ?? [];
  return typeof command === 'string' ? command.split(/\s+/).filter(Boolean) : command.map(String);
}

interface Mount {
  source: string;
  target: string;
  readOnly: boolean;
}

/** Short (`source:target[:mode]`, the source may hold `${…:-…}`) and long volume syntax. */
function mountsOf(service: Service): Mount[] {
  return (service.volumes ?? []).map((volume) => {
    if (typeof volume !== 'string')
      return {
        source: volume.source ?? '',
        target: volume.target ?? '',
        readOnly: volume.read_only === true,
      };
    const match = /^(.*):(\/[^:]*)(?::([a-z,]+))?$/.exec(volume);
    if (!match) return { source: '', target: volume, readOnly: false };
    return {
      source: match[1]!,
      target: match[2]!,
      readOnly: (match[3] ?? '').split(',').includes('ro'),
    };
  });
}

function containerPorts(service: Service): number[] {
  return (service.ports ?? []).map((port) => {
    if (typeof port === 'number') return port;
    if (typeof port === 'object') return port.target ?? 0;
    return Number(withDefaults(port).split(':').pop()!.split('/')[0]);
  });
}

function isNamedVolume(source: string): boolean {
  return /^[a-zA-Z0-9][\w.-]*$/.test(source);
}

describe('docker-compose.yml', () => {
  it('has the services redis, api, worker and scheduler', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'redis', 'scheduler', 'worker']);
  });

  it('redis is redis:7 with AOF on and its /data on a named volume', () => {
    const redis = compose.services.redis!;
    expect(redis.image).toMatch(/^redis:7(\b|$)/);
    const command = commandOf(redis).join(' ');
    expect(command).toMatch(/redis-server\b/);
    expect(command).toMatch(/--appendonly\s+yes\b/);
    const data = mountsOf(redis).find((mount) => mount.target === '/data');
    expect(data, 'a volume mounted at /data').toBeDefined();
    expect(isNamedVolume(data!.source), `${data!.source} should be a named volume`).toBe(true);
    expect(Object.keys(compose.volumes ?? {})).toContain(data!.source);
  });

  // The tested topology (docs/adr/0007-compose-is-the-tested-topology.md): Redis speaks TLS only and needs an ACL user (it had an optional password).
  it('redis: TLS only, the default user off, an ACL user whose password the environment must give', () => {
    const redis = compose.services.redis!;
    const command = commandOf(redis).join(' ');
    expect(command).toMatch(/--port\s+0\b/);
    expect(command).toMatch(/--tls-port\s+6380\b/);
    for (const file of ['--tls-cert-file', '--tls-key-file', '--tls-ca-cert-file'])
      expect(command).toMatch(new RegExp(`${file}\\s+/certs/`));
    expect(command).toMatch(/--user\s+default\s+off\b/);
    expect(command).toMatch(/--user\s+switchyard\s+on\s+">\$\$?REDIS_PASSWORD"/);
    expect(() => withDefaults(envOf(redis).REDIS_PASSWORD!)).toThrow(/REDIS_PASSWORD is required/);
    expect(withDefaults(envOf(redis).REDIS_PASSWORD!, REQUIRED)).toBe('pw-from-env');
    const certs = mountsOf(redis).find((mount) => mount.target === '/certs');
    expect(certs?.readOnly, 'certificates mounted read-only at /certs').toBe(true);
  });

  it('api, worker and scheduler run the image the Dockerfile builds, each with its command', () => {
    for (const name of SWITCHYARD_SERVICES) {
      const service = compose.services[name]!;
      const built = typeof service.build === 'string' ? service.build : service.build?.context;
      const fromBuild = built === '.' || built === './';
      const fromSharedImage = SWITCHYARD_SERVICES.some((other) => {
        const peer = compose.services[other]!;
        return peer.build !== undefined && peer.image !== undefined && peer.image === service.image;
      });
      expect(fromBuild || fromSharedImage, `${name} builds . or uses the image another service builds`).toBe(
        true,
      );
      expect(service.entrypoint, `${name} keeps the image's switchyard entrypoint`).toBeUndefined();
      expect(commandOf(service)[0], `${name}'s command`).toBe(name);
    }
  });

  it('api listens on all interfaces of its container on port 7317, published', () => {
    const api = compose.services.api!;
    const command = commandOf(api);
    expect(command.slice(0, 3)).toEqual(['api', '--host', '0.0.0.0']);
    const port = command.includes('--port') ? Number(command[command.indexOf('--port') + 1]) : 7317;
    expect(port).toBe(7317);
    expect(containerPorts(api)).toContain(7317);
  });

  it('api, worker and scheduler share SWITCHYARD_REDIS_URL and SWITCHYARD_DATA_DIR', () => {
    const envs = SWITCHYARD_SERVICES.map((name) => envOf(compose.services[name]!));
    for (const key of ['SWITCHYARD_REDIS_URL', 'SWITCHYARD_DATA_DIR']) {
      const values = envs.map((env) => env[key]);
      expect(
        values.every((value) => value !== undefined && value !== ''),
        key,
      ).toBe(true);
      expect(new Set(values).size, `${key} is the same everywhere`).toBe(1);
    }
    const url = new URL(withDefaults(envs[0]!.SWITCHYARD_REDIS_URL!, REQUIRED));
    expect(url.protocol).toBe('rediss:');
    expect(url.hostname).toBe('redis'); // the compose service, the name in its certificate
    expect(url.port).toBe('6380');
    expect(url.username).toBe('switchyard');
    expect(url.password).toBe('pw-from-env');
  });

  it("api, worker and scheduler trust the CA of Redis' certificate (NODE_EXTRA_CA_CERTS, mounted read-only)", () => {
    for (const name of SWITCHYARD_SERVICES) {
      const service = compose.services[name]!;
      const ca = envOf(service).NODE_EXTRA_CA_CERTS;
      expect(ca, name).toMatch(/^\//);
      const mount = mountsOf(service).find((entry) => entry.target === ca);
      expect(mount?.readOnly, `${name}: ${ca} mounted read-only`).toBe(true);
    }
  });

  it('every service has a healthcheck', () => {
    for (const name of ['redis', ...SWITCHYARD_SERVICES]) {
      const test = compose.services[name]!.healthcheck?.test;
      expect(test, name).toBeDefined();
      expect([test].flat().join(' '), name).not.toMatch(/^NONE/);
    }
  });

  it('worker, api and scheduler mount the plugins directory read-only at <data dir>/plugins', () => {
    for (const name of SWITCHYARD_SERVICES) {
      const service = compose.services[name]!;
      const dataDir = envOf(service).SWITCHYARD_DATA_DIR!;
      const mounts = mountsOf(service);
      const plugins = mounts.find((mount) => mount.target === `${dataDir}/plugins`);
      expect(plugins, `${name}: a mount at ${dataDir}/plugins`).toBeDefined();
      expect(plugins!.readOnly, `${name}: the plugins mount is read-only`).toBe(true);
      expect(isNamedVolume(plugins!.source), 'plugins come from a host directory').toBe(false);
      const data = mounts.find((mount) => mount.target === dataDir);
      expect(data, `${name}: a volume at ${dataDir}`).toBeDefined();
      // The tested topology (docs/adr/0007): each worker has its own data dir (as each worker host had in
      // test/multihost); api and scheduler share a named volume (the api writes api-token there).
      if (name === 'worker') expect(data!.source, 'an anonymous volume per worker container').toBe('');
      else expect(Object.keys(compose.volumes ?? {})).toContain(data!.source);
    }
  });

  it('worker scales: no fixed container name, no published ports, no fixed replica count', () => {
    const worker = compose.services.worker!;
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports ?? []).toEqual([]);
    expect(worker.deploy?.replicas).toBeUndefined();
  });

  it('waits for a healthy Redis before starting the switchyard services', () => {
    expect(compose.services.redis!).toHaveProperty('healthcheck');
    for (const name of SWITCHYARD_SERVICES) {
      const dependsOn = compose.services[name]!.depends_on;
      expect(dependsOn, name).toBeDefined();
      if (Array.isArray(dependsOn)) expect(dependsOn).toContain('redis');
      else expect(dependsOn).toMatchObject({ redis: { condition: 'service_healthy' } });
    }
  });

  it('passes only options the built CLI knows', () => {
    const cli = join(REPO, 'dist', 'cli', 'main.js');
    expect(existsSync(cli), 'run `npm run build` first').toBe(true);
    for (const name of SWITCHYARD_SERVICES) {
      const command = commandOf(compose.services[name]!);
      const help = execFileSync(process.execPath, [cli, command[0]!, '--help'], { encoding: 'utf8' });
      for (const option of command.filter((word) => word.startsWith('--')))
        expect(help, `\`switchyard ${command[0]} --help\` lists ${option}`).toMatch(
          new RegExp(`(^|\\s)${option}(\\s|$)`, 'm'),
        );
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = () => readFileSync(join(REPO, 'Dockerfile'), 'utf8');
  /** Instructions, with line continuations joined and comments dropped. */
  const instructions = () =>
    dockerfile()
      .replace(/\\\n/g, ' ')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));

  // The tested topology (docs/adr/0007): Node 24 by default, 20 and 22 by build argument (was node:20 only).
  it('builds on node:<20|22|24>-bookworm-slim (24 by default) with npm ci and npm run build', () => {
    const from = instructions().filter((line) => /^FROM\s/i.test(line));
    expect(from.length).toBeGreaterThan(0);
    const arg = /^ARG\s+NODE_VERSION=(\d+)$/m.exec(dockerfile())?.[1];
    expect(arg).toBe('24');
    for (const line of from) {
      const image = line.replace('${NODE_VERSION}', arg!);
      expect(image).toMatch(/^FROM\s+node:(20|22|24)-bookworm-slim(\s|$)/i);
    }
    const runs = instructions()
      .filter((line) => /^RUN\s/i.test(line))
      .join('\n');
    expect(runs).toMatch(/\bnpm ci\b/);
    expect(runs).toMatch(/\bnpm run build\b/);
  });

  it('runs as a non-root user with the switchyard CLI as its entrypoint', () => {
    const users = instructions().filter((line) => /^USER\s/i.test(line));
    expect(users.length, 'a USER instruction').toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^USER\s+(root|0)(:|\s|$)/i);
    const entrypoint = instructions().filter((line) => /^ENTRYPOINT\s/i.test(line));
    expect(entrypoint.at(-1)).toMatch(/switchyard|dist\/cli\/main\.js/);
  });

  it('.dockerignore keeps node_modules, dist and local data out of the build context', () => {
    const ignored = readFileSync(join(REPO, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim());
    for (const entry of ['node_modules', 'dist', '.git']) expect(ignored).toContain(entry);
  });
});
