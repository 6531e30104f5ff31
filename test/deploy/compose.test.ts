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

/** Compose interpolation with no variables set: `${VAR:-default}` → default, `${VAR}` → ''. */
function withDefaults(value: string): string {
  return value
    .split('$$')
    .map((part) =>
      part.replace(/\$\{[A-Z0-9_]+(?::?-([^}]*))?\}/g, (_, fallback: string | undefined) => fallback ?? ''),
    )
    .join('$');
}

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

  it('redis takes an optional password from the environment', () => {
    const redis = compose.services.redis!;
    const command = commandOf(redis).join(' ');
    // Only when the variable is set: no password by default.
    expect(command).toMatch(/\$\$?\{REDIS_PASSWORD:\+--requirepass/);
    expect(Object.keys(envOf(redis))).toContain('REDIS_PASSWORD');
    expect(withDefaults(envOf(redis).REDIS_PASSWORD!)).toBe('');
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
    const url = new URL(withDefaults(envs[0]!.SWITCHYARD_REDIS_URL!));
    expect(url.protocol).toBe('redis:');
    expect(url.hostname).toBe('redis'); // the compose service
    expect(url.port || '6379').toBe('6379');
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
      // The data dir itself is a shared named volume (the api writes api-token there).
      const data = mounts.find((mount) => mount.target === dataDir);
      expect(data, `${name}: a volume at ${dataDir}`).toBeDefined();
      expect(Object.keys(compose.volumes ?? {})).toContain(data!.source);
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

  it('builds on node:20-bookworm-slim with npm ci and npm run build', () => {
    const from = instructions().filter((line) => /^FROM\s/i.test(line));
    expect(from.length).toBeGreaterThan(0);
    for (const line of from) expect(line).toMatch(/^FROM\s+node:20-bookworm-slim(\s|$)/i);
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
