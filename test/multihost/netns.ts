// Separate hosts on one machine: one Linux network namespace per host, each
// with its own eth0 on 10.77.0.0/24, plugged into a bridge that lives in a
// switch namespace of its own. Nothing of it is in the caller's namespace: no
// interface, no address, no listener. A process started on a host runs in its
// network namespace, with its own hostname (UTS namespace) and its own data
// directory bind-mounted at the one path every host uses (mount namespace),
// as the same image would on separate machines.
//
// Every namespace is named `sy15-<pid of the test process>-<host>`: teardown
// removes them (and so their veths, and every process still in them), and
// removeLeftovers() removes those of a test process that is gone.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const NETNS_PREFIX = 'sy15-';
export const SUBNET = '10.77.0';

/** Why the suite cannot run here, or undefined when it can. */
export async function missingPrerequisite(): Promise<string | undefined> {
  if (process.platform !== 'linux') return 'needs Linux network namespaces';
  if (process.getuid?.() !== 0) return 'needs root (ip netns, veth pairs, mount namespaces)';
  for (const tool of ['ip', 'unshare', 'openssl', 'redis-server']) {
    try {
      await run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      return `needs ${tool} on PATH (iproute2, util-linux, openssl, redis-server)`;
    }
  }
  try {
    await run('ip', ['netns', 'list']);
  } catch (error) {
    return `needs a working \`ip netns\` (iproute2): ${(error as Error).message}`;
  }
  return undefined;
}

export interface Host {
  name: string;
  namespace: string;
  address: string;
  /** Spawns `command args…` on this host; `hostDir` is mounted at `sharedDir` for it alone. */
  spawn(
    command: string,
    args: string[],
    options?: { env?: NodeJS.ProcessEnv; mount?: Mount; stdin?: boolean },
  ): ChildProcess;
}

export interface Mount {
  /** This host's own directory… */
  hostDir: string;
  /** …seen at this path, the same on every host. */
  at: string;
}

export interface Topology {
  hosts: Record<string, Host>;
  /** The host's cable: `down` cuts it from every other host (a partition), `up` plugs it back. */
  setLink(host: string, state: 'up' | 'down'): Promise<void>;
  destroy(): Promise<void>;
}

function namespaceOf(owner: number, host: string): string {
  return `${NETNS_PREFIX}${owner}-${host}`;
}

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

async function namespaces(): Promise<string[]> {
  const { stdout } = await run('ip', ['netns', 'list']);
  return stdout
    .split('\n')
    .map((line) => line.split(' ')[0]!)
    .filter((name) => name.startsWith(NETNS_PREFIX));
}

/** SIGKILLs every process in the namespace, then deletes it (its veths go with it). */
async function removeNamespace(name: string): Promise<void> {
  const { stdout } = await run('ip', ['netns', 'pids', name]).catch(() => ({ stdout: '' }));
  for (const pid of stdout.split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await ip('netns', 'del', name).catch(() => {});
}

/** Namespaces a crashed earlier run left (its test process is gone). */
export async function removeLeftovers(): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await namespaces()) {
    const owner = Number(name.slice(NETNS_PREFIX.length).split('-')[0]);
    if (owner === process.pid || isRunning(owner)) continue;
    await removeNamespace(name);
    removed.push(name);
  }
  return removed;
}

/** `hosts`: name → last octet of its address. */
export async function createTopology(hosts: Record<string, number>): Promise<Topology> {
  const owner = process.pid;
  const made: string[] = [];
  const destroy = async () => {
    for (const name of made.reverse()) await removeNamespace(name);
  };
  try {
    const switchNs = namespaceOf(owner, 'sw');
    await ip('netns', 'add', switchNs);
    made.push(switchNs);
    await ip('-n', switchNs, 'link', 'add', 'br0', 'type', 'bridge');
    await ip('-n', switchNs, 'link', 'set', 'br0', 'up');
    const result: Record<string, Host> = {};
    for (const [name, octet] of Object.entries(hosts)) {
      const namespace = namespaceOf(owner, name);
      await ip('netns', 'add', namespace);
      made.push(namespace);
      // The switch port is named after the host; the host's end is its eth0.
      await ip(
        '-n',
        switchNs,
        'link',
        'add',
        name,
        'type',
        'veth',
        'peer',
        'name',
        'eth0',
        'netns',
        namespace,
      );
      await ip('-n', switchNs, 'link', 'set', name, 'master', 'br0', 'up');
      const address = `${SUBNET}.${octet}`;
      await ip('-n', namespace, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
      await ip('-n', namespace, 'link', 'set', 'eth0', 'up');
      await ip('-n', namespace, 'link', 'set', 'lo', 'up');
      result[name] = {
        name,
        namespace,
        address,
        spawn(command, args, options = {}) {
          // unshare: the host's own hostname and mounts; exec keeps the pid ours to kill.
          const script = options.mount
            ? 'hostname "$1" && mount --bind "$2" "$3" && shift 3 && exec "$@"'
            : 'hostname "$1" && shift 3 && exec "$@"';
          return spawn(
            'ip',
            [
              'netns',
              'exec',
              namespace,
              'unshare',
              '--uts',
              '--mount',
              '--propagation',
              'private',
              'sh',
              '-c',
              script,
              'sh',
              name,
              options.mount?.hostDir ?? '-',
              options.mount?.at ?? '-',
              command,
              ...args,
            ],
            { stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], env: options.env ?? process.env },
          );
        },
      };
    }
    return {
      hosts: result,
      async setLink(host, state) {
        await ip('-n', switchNs, 'link', 'set', host, state);
      },
      destroy,
    };
  } catch (error) {
    await destroy();
    throw error;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
