// Projects: id, display name, real root path, trusted. Ids per docs/CLI.md: the
// directory's name, lower-cased, anything outside [a-z0-9._-] replaced by '-'.
import { readdir, realpath, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Redis } from 'ioredis';
import { auditInto } from '../access/index.js';
import { InvalidInputError, ProjectNotFoundError } from '../platform/index.js';
import type { Keys } from '../redis/index.js';

export interface Project {
  id: string;
  displayName: string;
  root: string;
  trusted: boolean;
}

const PROJECT_ID = /^[a-z0-9._-]{1,128}$/;

export function projectIdFor(directoryName: string): string {
  return directoryName.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
}

export interface AddOptions {
  id?: string;
  name?: string;
  trust?: boolean;
}

export class ProjectService {
  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
  ) {}

  async list(): Promise<Project[]> {
    const raw = await this.redis.hvals(this.keys.projects);
    return raw.map((value) => JSON.parse(value) as Project).sort((a, b) => a.id.localeCompare(b.id));
  }

  async get(id: string): Promise<Project | undefined> {
    const raw = await this.redis.hget(this.keys.projects, id);
    return raw ? (JSON.parse(raw) as Project) : undefined;
  }

  /** The projects with these ids, in order; undefined for an unknown id. One round trip. */
  async getMany(ids: string[]): Promise<(Project | undefined)[]> {
    if (ids.length === 0) return [];
    const raw = await this.redis.hmget(this.keys.projects, ...ids);
    return raw.map((value) => (value ? (JSON.parse(value) as Project) : undefined));
  }

  async require(id: string): Promise<Project> {
    const project = await this.get(id);
    if (!project) throw new ProjectNotFoundError(id);
    return project;
  }

  async add(path: string, options: AddOptions, actor: string): Promise<Project> {
    const [project] = await this.#addAll([await this.#describe(path, options)], actor);
    return project!;
  }

  /** Adds each immediate, non-hidden subdirectory of `dir`; all or nothing. */
  async scan(dir: string, options: { trust?: boolean }, actor: string): Promise<Project[]> {
    const root = await existingDirectory(dir);
    const entries = await readdir(root, { withFileTypes: true });
    const candidates = [];
    for (const entry of entries
      .filter((item) => item.isDirectory() && !item.name.startsWith('.'))
      .sort((a, b) => a.name.localeCompare(b.name))) {
      candidates.push(await this.#describe(join(root, entry.name), { trust: options.trust }));
    }
    return this.#addAll(candidates, actor, { skipUnchanged: true, scanning: true });
  }

  async setTrusted(id: string, trusted: boolean, actor: string): Promise<Project> {
    const project = await this.require(id);
    const next = { ...project, trusted };
    await auditInto(this.redis.multi().hset(this.keys.projects, id, JSON.stringify(next)), this.keys, {
      actor,
      action: trusted ? 'project.trust' : 'project.untrust',
      target: id,
      detail: { root: project.root },
    }).exec();
    return next;
  }

  async remove(id: string, actor: string): Promise<Project> {
    const project = await this.require(id);
    await auditInto(this.redis.multi().hdel(this.keys.projects, id), this.keys, {
      actor,
      action: 'project.remove',
      target: id,
      detail: { root: project.root },
    }).exec();
    return project;
  }

  async #describe(path: string, options: AddOptions): Promise<Project> {
    const root = await existingDirectory(path);
    const id = options.id ?? projectIdFor(basename(root));
    if (!PROJECT_ID.test(id)) {
      throw new InvalidInputError(
        `project id ${JSON.stringify(id)} must be 1–128 characters of a-z 0-9 . _ -`,
      );
    }
    return { id, displayName: options.name ?? basename(root), root, trusted: options.trust === true };
  }

  async #addAll(
    candidates: Project[],
    actor: string,
    options: { skipUnchanged?: boolean; scanning?: boolean } = {},
  ): Promise<Project[]> {
    const stored = await this.getMany(candidates.map((candidate) => candidate.id));
    const seen = new Map<string, Project>();
    candidates.forEach((candidate, index) => {
      const twin = seen.get(candidate.id) ?? stored[index];
      if (twin && twin.root !== candidate.root) {
        // scan takes no --id: name the fixes that work there.
        const fix = options.scanning
          ? `rename one of the directories, or add it alone with \`project add ${candidate.root} --id <other-id>\``
          : 'give it another id with --id';
        throw new InvalidInputError(
          `project id ${candidate.id} clashes: ${twin.root} and ${candidate.root} (${fix})`,
        );
      }
      seen.set(candidate.id, candidate);
    });
    const results: Project[] = [];
    let multi = this.redis.multi();
    let changes = 0;
    candidates.forEach((candidate, index) => {
      const existing = stored[index];
      // Re-adding keeps an earlier trust decision unless --trust asks for more.
      const project = { ...candidate, trusted: candidate.trusted || existing?.trusted === true };
      results.push(project);
      // A re-scan that changes nothing writes nothing (no record, no audit entry).
      if (options.skipUnchanged && existing && sameProject(existing, project)) return;
      changes++;
      multi = multi.hset(this.keys.projects, project.id, JSON.stringify(project));
      multi = auditInto(multi, this.keys, {
        actor,
        action: existing ? 'project.update' : 'project.add',
        target: project.id,
        detail: { root: project.root, trusted: project.trusted },
      });
    });
    if (changes > 0) await multi.exec();
    return results;
  }
}

function sameProject(a: Project, b: Project): boolean {
  return a.id === b.id && a.displayName === b.displayName && a.root === b.root && a.trusted === b.trusted;
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
