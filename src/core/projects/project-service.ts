// Projects: id, display name, real root path, trusted, labels. Ids per
// docs/CLI.md: the directory's name, lower-cased, anything outside
// [a-z0-9._-] replaced by '-'. One directory is one project: a second id over
// a root already registered is refused, naming the first, whatever path names
// it (a symlink, a bind mount, /proc/self/cwd: the same device and inode).
import { statSync } from 'node:fs';
import { access, constants, readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Redis } from 'ioredis';
import { auditInto, type AuditInput } from '../access/index.js';
import {
  ConflictError,
  InvalidInputError,
  ProjectNotFoundError,
  ProjectRootMissingError,
  SwitchyardError,
  messageOf,
} from '../platform/index.js';
import { WatchedKey, markCallStateChanged, type Keys, type Transaction } from '../redis/index.js';
import { lockNameOfRealPath, projectLockName } from './project-lock.js';

export interface Project {
  id: string;
  displayName: string;
  root: string;
  trusted: boolean;
  /** Sorted, unique; see LABEL. */
  labels: string[];
}

/** A project as `project list` shows it: whether its root is still a directory there. */
export interface ProjectListing extends Project {
  rootMissing: boolean;
}

/** What a scan registered, and each directory it refused with the reason. */
export interface ScanReport {
  /** Each directory registered: `new` now, or `known` (registered before with this root). */
  registered: (Project & { scan: 'new' | 'known' })[];
  refused: { path: string; reason: string }[];
  /** Projects registered under this directory whose own directory is gone (renamed or deleted). */
  missing: Project[];
  /** With `prune`: the missing ones, forgotten now. */
  pruned: string[];
}

const PROJECT_ID = /^[a-z0-9._-]{1,128}$/;
/** A label: lower-case, 1–63 characters, starting with a letter or digit. */
export const LABEL = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** The labels, checked (InvalidInputError naming the first bad one), sorted and unique. */
export function checkLabels(labels: readonly string[]): string[] {
  for (const label of labels) {
    if (!LABEL.test(label)) {
      throw new InvalidInputError(
        `label ${JSON.stringify(label)} must be 1–63 lower-case characters: a-z or 0-9 first, then a-z 0-9 . _ -`,
      );
    }
  }
  return [...new Set(labels)].sort();
}

/** Stored records written before labels existed have none. */
function parseProject(raw: string): Project {
  const stored = JSON.parse(raw) as Omit<Project, 'labels'> & { labels?: string[] };
  return { ...stored, labels: stored.labels ?? [] };
}

export function projectIdFor(directoryName: string): string {
  return directoryName.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
}

export interface AddOptions {
  id?: string;
  name?: string;
  trust?: boolean | undefined;
}

export interface ScanOptions {
  trust?: boolean;
  /** Added to every project the scan registers (kept ones too). */
  labels?: string[];
  /** Forget the projects registered under the directory whose own directory is gone. */
  prune?: boolean;
}

export class ProjectService {
  /** Every change reads and writes under WATCH: two writers never lose each other's change. */
  readonly #records: WatchedKey;

  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
  ) {
    this.#records = new WatchedKey(redis, keys.projects, 'the project registry');
  }

  async close(): Promise<void> {
    await this.#records.close();
  }

  async list(reader: Redis = this.redis): Promise<Project[]> {
    const raw = await reader.hvals(this.keys.projects);
    return raw.map(parseProject).sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Every project with whether its root is missing here (`project list`). */
  async listing(): Promise<ProjectListing[]> {
    const projects = await this.list();
    const missing = await mapBounded(projects, async (project) => !(await isDirectory(project.root)));
    return projects.map((project, index) => ({ ...project, rootMissing: missing[index]! }));
  }

  async get(id: string, reader: Redis = this.redis): Promise<Project | undefined> {
    const raw = await reader.hget(this.keys.projects, id);
    return raw ? parseProject(raw) : undefined;
  }

  /** The projects with these ids, in order; undefined for an unknown id. One round trip. */
  async getMany(ids: string[], reader: Redis = this.redis): Promise<(Project | undefined)[]> {
    if (ids.length === 0) return [];
    const raw = await reader.hmget(this.keys.projects, ...ids);
    return raw.map((value) => (value ? parseProject(value) : undefined));
  }

  async require(id: string, reader: Redis = this.redis): Promise<Project> {
    const project = await this.get(id, reader);
    if (!project) throw new ProjectNotFoundError(id);
    return project;
  }

  /**
   * Refuses (PROJECT_ROOT_MISSING) a project whose root is no longer a
   * directory: nothing may run on it. Before every call: one synchronous stat
   * (microseconds) instead of a thread-pool round trip and its promises; the
   * call's keeper opens the same root right after, so a root that would block
   * here blocks the call anyway.
   */
  async requireRoot(project: Project): Promise<void> {
    if (!isDirectoryNow(project.root)) throw new ProjectRootMissingError(project.id, project.root);
  }

  /**
   * The name of the operation lock of `project`'s directory (projectLockName).
   * Ids registered over one directory before aliases were refused (a bind
   * mount, another path to it) share one lock: the lowest id's root names it.
   * Identities are read now, from the paths (records store none: a device
   * number need not survive a reboot).
   */
  async lockNameOf(project: Project): Promise<string> {
    // Each root resolved once: its identity and its lock's name come from the same real path, so a
    // symlink flipped in between cannot pair one directory's identity with another's lock.
    const own = await resolvedIdentity(project.root);
    if (own === undefined) return projectLockName(project.root);
    const others = (await this.list()).filter((other) => other.id !== project.id);
    const resolved = await mapBounded(others, (other) => resolvedIdentity(other.root));
    let first = { id: project.id, real: own.real };
    resolved.forEach((other, index) => {
      if (other?.identity === own.identity && others[index]!.id < first.id)
        first = { id: others[index]!.id, real: other.real };
    });
    return lockNameOfRealPath(first.real);
  }

  async add(path: string, options: AddOptions, actor: string): Promise<Project> {
    const candidate = await this.#describe(path, options);
    const { registered, refused } = await this.#addAll([candidate], actor, { add: true });
    if (refused[0]) throw refused[0].error;
    return registered[0]!;
  }

  /**
   * Adds each immediate, non-hidden subdirectory of `dir`: every one it can;
   * each one it cannot (an id clash, a root registered under another id, an
   * entry it cannot read) is refused with the reason, the others registered.
   */
  async scan(dir: string, options: ScanOptions, actor: string): Promise<ScanReport> {
    const labels = checkLabels(options.labels ?? []);
    const root = await existingDirectory(dir);
    const entries = await readdir(root, { withFileTypes: true });
    const candidates: Project[] = [];
    const unreadable: ScanReport['refused'] = [];
    for (const entry of entries
      .filter((item) => item.isDirectory() && !item.name.startsWith('.'))
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(root, entry.name);
      try {
        await access(path, constants.R_OK | constants.X_OK);
        candidates.push({ ...(await this.#describe(path, { trust: options.trust })), labels });
      } catch (error) {
        const reason =
          error instanceof SwitchyardError ? error.message : `cannot be read: ${messageOf(error)}`;
        unreadable.push({ path, reason });
      }
    }
    const before = await this.getMany(candidates.map((candidate) => candidate.id));
    const { registered, refused } = await this.#addAll(candidates, actor, { skipUnchanged: true });
    const knownRoots = new Set(before.filter((project) => project !== undefined).map((p) => p!.root));
    const missing = await this.#missingUnder(root);
    const pruned: string[] = [];
    if (options.prune) for (const project of missing) pruned.push((await this.remove(project.id, actor)).id);
    return {
      registered: registered.map((project) => ({
        ...project,
        scan: knownRoots.has(project.root) ? ('known' as const) : ('new' as const),
      })),
      refused: [...unreadable, ...refused.map(({ path, error }) => ({ path, reason: error.message }))].sort(
        (a, b) => a.path.localeCompare(b.path),
      ),
      missing,
      pruned,
    };
  }

  /** The projects whose root was a subdirectory of `dir` and is a directory no more. */
  async #missingUnder(dir: string): Promise<Project[]> {
    const under = (await this.list()).filter((project) => dirname(project.root) === dir);
    const gone = await mapBounded(under, async (project) => !(await isDirectory(project.root)));
    return under.filter((_, index) => gone[index]);
  }

  /** Adds labels to a project (those it has already stay); audited when anything changed. */
  async addLabels(id: string, labels: string[], actor: string): Promise<Project> {
    const checked = checkLabels(labels);
    if (checked.length === 0) throw new InvalidInputError('name at least one label');
    return this.#change(id, (project) => {
      const added = checked.filter((label) => !project.labels.includes(label));
      if (added.length === 0) return undefined;
      return {
        next: { ...project, labels: [...project.labels, ...added].sort() },
        audit: { actor, action: 'project.label', target: id, detail: { labels: added } },
      };
    });
  }

  /** Removes labels from a project (one it lacks is no change); audited when anything changed. */
  async removeLabels(id: string, labels: string[], actor: string): Promise<Project> {
    const checked = checkLabels(labels);
    if (checked.length === 0) throw new InvalidInputError('name at least one label');
    return this.#change(id, (project) => {
      const removed = checked.filter((label) => project.labels.includes(label));
      if (removed.length === 0) return undefined;
      return {
        next: { ...project, labels: project.labels.filter((label) => !removed.includes(label)) },
        audit: { actor, action: 'project.unlabel', target: id, detail: { labels: removed } },
      };
    });
  }

  setTrusted(id: string, trusted: boolean, actor: string): Promise<Project> {
    return this.#change(id, (project) => ({
      next: { ...project, trusted },
      audit: {
        actor,
        action: trusted ? 'project.trust' : 'project.untrust',
        target: id,
        detail: { root: project.root },
      },
    }));
  }

  remove(id: string, actor: string): Promise<Project> {
    return this.#change(id, (project) => ({
      next: null,
      audit: { actor, action: 'project.remove', target: id, detail: { root: project.root } },
    }));
  }

  /**
   * One project read and written under WATCH with its audit entry: `change` returns the new record
   * (null: removed) or undefined for no change. Resolves to the record as written (the removed one).
   */
  #change(
    id: string,
    change: (project: Project) => { next: Project | null; audit: AuditInput } | undefined,
  ): Promise<Project> {
    return this.#records.transact(async (tx) => {
      const project = await this.require(id, tx);
      const outcome = change(project);
      if (!outcome) return { value: project };
      const multi =
        outcome.next === null
          ? tx.multi().hdel(this.keys.projects, id)
          : tx.multi().hset(this.keys.projects, id, JSON.stringify(outcome.next));
      // A batch job's cached read of the project (job-call-state.ts) is read again before its next call.
      markCallStateChanged(multi, this.keys);
      return { multi: auditInto(multi, this.keys, outcome.audit), value: outcome.next ?? project };
    });
  }

  async #describe(path: string, options: AddOptions): Promise<Project> {
    const root = await existingDirectory(path);
    const id = options.id ?? projectIdFor(basename(root));
    if (!PROJECT_ID.test(id)) {
      throw new InvalidInputError(
        `project id ${JSON.stringify(id)} must be 1–128 characters of a-z 0-9 . _ -`,
      );
    }
    return {
      id,
      displayName: options.name ?? basename(root),
      root,
      trusted: options.trust === true,
      labels: [],
    };
  }

  /**
   * Registers the candidates that clash with nothing, in one write with their
   * audit entries; the others are refused with the error that says why: an id
   * taken by another root (earlier in the list or stored), or a real root
   * registered under another id.
   */
  async #addAll(
    candidates: Project[],
    actor: string,
    options: { skipUnchanged?: boolean; add?: boolean } = {},
  ): Promise<{ registered: Project[]; refused: { path: string; error: SwitchyardError }[] }> {
    // Under WATCH: a root or an id registered meanwhile by another writer is seen (the checks run again).
    return this.#records.transact((tx) => this.#addAllIn(tx, candidates, actor, options));
  }

  async #addAllIn(
    tx: Redis,
    candidates: Project[],
    actor: string,
    options: { skipUnchanged?: boolean; add?: boolean },
  ): Promise<Transaction<{ registered: Project[]; refused: { path: string; error: SwitchyardError }[] }>> {
    const stored = await this.getMany(
      candidates.map((candidate) => candidate.id),
      tx,
    );
    const byRoot = await this.#idsByRealRoot(tx);
    const identities = await mapBounded(candidates, (candidate) => directoryIdentity(candidate.root));
    const seen = new Map<string, Project>();
    const accepted: { candidate: Project; existing: Project | undefined }[] = [];
    const refused: { path: string; error: SwitchyardError }[] = [];
    candidates.forEach((candidate, index) => {
      const twin = seen.get(candidate.id) ?? stored[index];
      if (twin && twin.root !== candidate.root) {
        // scan takes no --id: name the fixes that work there.
        const fix = options.add
          ? 'give it another id with --id'
          : `rename one of the directories, or add it alone with \`project add ${candidate.root} --id <other-id>\``;
        refused.push({
          path: candidate.root,
          error: new InvalidInputError(
            `project id ${candidate.id} clashes: ${twin.root} and ${candidate.root} (${fix})`,
          ),
        });
        return;
      }
      const identity = identities[index];
      const holder =
        byRoot.get(candidate.root) ?? (identity === undefined ? undefined : byRoot.get(identity));
      if (holder !== undefined && holder.id !== candidate.id) {
        // A bind mount or another path to a registered root: name the root it is.
        const alias = holder.root === candidate.root ? '' : ` (the same directory as ${holder.root})`;
        refused.push({
          path: candidate.root,
          error: new ConflictError(
            `directory ${candidate.root} is already project ${holder.id}${alias}; one directory is one project (\`project remove ${holder.id}\` first to register it as ${candidate.id})`,
          ),
        });
        return;
      }
      seen.set(candidate.id, candidate);
      for (const key of [candidate.root, identity]) if (key !== undefined) byRoot.set(key, candidate);
      accepted.push({ candidate, existing: stored[index] });
    });
    const results: Project[] = [];
    let multi = tx.multi();
    let changes = 0;
    accepted.forEach(({ candidate, existing }) => {
      // Re-adding keeps an earlier trust decision unless --trust asks for more, and every label.
      const project = {
        ...candidate,
        trusted: candidate.trusted || existing?.trusted === true,
        labels: [...new Set([...(existing?.labels ?? []), ...candidate.labels])].sort(),
      };
      results.push(project);
      // A re-scan that changes nothing writes nothing (no record, no audit entry).
      if (options.skipUnchanged && existing && sameProject(existing, project)) return;
      changes++;
      multi = multi.hset(this.keys.projects, project.id, JSON.stringify(project));
      multi = auditInto(multi, this.keys, {
        actor,
        action: existing ? 'project.update' : 'project.add',
        target: project.id,
        detail: {
          root: project.root,
          trusted: project.trusted,
          ...(project.labels.length > 0 ? { labels: project.labels } : {}),
        },
      });
    });
    const value = { registered: results, refused };
    return changes > 0 ? { multi: markCallStateChanged(multi, this.keys), value } : { value };
  }

  /**
   * Each registered root, as stored, resolved as it is now, and by its
   * directory's identity (device and inode, when it can be read) → the first
   * project holding it.
   */
  async #idsByRealRoot(reader: Redis): Promise<Map<string, Project>> {
    const projects = await this.list(reader);
    const real = await mapBounded(projects, (project) => realpath(project.root).catch(() => project.root));
    const identities = await mapBounded(projects, (project) => directoryIdentity(project.root));
    const byRoot = new Map<string, Project>();
    projects.forEach((project, index) => {
      for (const key of [project.root, real[index]!, identities[index]])
        if (key !== undefined && !byRoot.has(key)) byRoot.set(key, project);
    });
    return byRoot;
  }
}

function sameProject(a: Project, b: Project): boolean {
  return (
    a.id === b.id &&
    a.displayName === b.displayName &&
    a.root === b.root &&
    a.trusted === b.trusted &&
    a.labels.join(',') === b.labels.join(',')
  );
}

/** `dev:<device>:<inode>` of the directory at `path` (what every path to it shares); undefined when it is none. */
/** The real path of `path` (resolved once) and the identity of the directory there; undefined when it is none. */
async function resolvedIdentity(path: string): Promise<{ real: string; identity: string } | undefined> {
  try {
    const real = await realpath(path);
    const identity = await directoryIdentity(real);
    return identity === undefined ? undefined : { real, identity };
  } catch {
    return undefined;
  }
}

export async function directoryIdentity(path: string): Promise<string | undefined> {
  try {
    const stats = await stat(path, { bigint: true });
    return stats.isDirectory() ? `dev:${stats.dev}:${stats.ino}` : undefined;
  } catch {
    return undefined;
  }
}

function isDirectoryNow(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** `task` over every item, at most 64 at a time (file system calls over thousands of projects). */
async function mapBounded<T, R>(items: readonly T[], task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const runner = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(64, items.length) }, runner));
  return results;
}

async function existingDirectory(path: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new InvalidInputError(`project path ${path} does not exist`);
  }
  if (!(await stat(real)).isDirectory())
    throw new InvalidInputError(`project path ${path} is not a directory`);
  return real;
}
