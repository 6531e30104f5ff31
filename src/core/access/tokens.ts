// API tokens with roles. A token is `sy_<id>_<secret>` (token-format.ts); only
// the SHA-256 of the secret is stored, and it is compared in constant time. A
// token may expire; its last use is kept beside it (at most one write a minute).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { appendAudit } from './audit.js';
import { checkTeamName } from './teams.js';
import { InvalidInputError, NotFoundError } from '../platform/index.js';
import type { Keys } from '../redis/index.js';
import { registerSecret, TOKEN_PATTERN, formatToken } from '../safety/index.js';

export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface TokenRecord {
  id: string;
  name: string;
  role: Role;
  hash: string;
  createdAt: string;
  createdBy: string;
  /** After this time the token is refused (401, saying it expired). */
  expiresAt?: string;
  /** Its team in the fair share of the workers (teams.ts); none: its own team of weight 1. */
  team?: string;
}

export type TokenView = Omit<TokenRecord, 'hash'> & { lastUsedAt?: string };

/** Why a presented token was refused, or the token it names. */
export type TokenCheck =
  | { ok: true; token: TokenView }
  | { ok: false; reason: 'unknown' }
  | { ok: false; reason: 'expired'; token: TokenView };

/** The last-used time is written at most this often per token. */
export const LAST_USED_RESOLUTION_MS = 60_000;
/** The longest expiry a token may be given (about ten years). */
export const MAX_EXPIRY_MS = 10 * 366 * 24 * 3600 * 1000;

export function roleAllows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

export class TokenStore {
  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
  ) {}

  get key(): string {
    return this.keys.tokens;
  }

  /** When each token was last used (a separate hash, so a late write never revives a revoked token). */
  get lastUsedKey(): string {
    return this.keys.tokensLastUsed;
  }

  async create(
    name: string,
    role: string,
    actor: string,
    options: { expiresInMs?: number; team?: string } = {},
  ): Promise<TokenView & { token: string }> {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
      throw new InvalidInputError('token name must be 1–64 characters of letters, digits, . _ -');
    }
    if (options.team !== undefined) checkTeamName(options.team);
    if (!(ROLES as readonly string[]).includes(role))
      throw new InvalidInputError(`role must be one of ${ROLES.join(', ')}`);
    const { expiresInMs } = options;
    if (
      expiresInMs !== undefined &&
      (!Number.isInteger(expiresInMs) || expiresInMs < 60_000 || expiresInMs > MAX_EXPIRY_MS)
    )
      throw new InvalidInputError('a token expiry must be from 1 minute to 10 years (e.g. 30d)');
    const existing = await this.list();
    if (existing.some((token) => token.name === name))
      throw new InvalidInputError(`a token named ${name} already exists`);
    const id = randomBytes(9)
      .toString('base64url')
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '0')
      .slice(0, 12);
    const secret = randomBytes(32).toString('base64url');
    const record: TokenRecord = {
      id,
      name,
      role: role as Role,
      hash: sha256(secret),
      createdAt: new Date().toISOString(),
      createdBy: actor,
      ...(expiresInMs !== undefined ? { expiresAt: new Date(Date.now() + expiresInMs).toISOString() } : {}),
      ...(options.team !== undefined ? { team: options.team } : {}),
    };
    await this.redis.hset(this.key, id, JSON.stringify(record));
    await appendAudit(this.redis, this.keys, {
      actor,
      action: 'token.create',
      target: id,
      detail: {
        name,
        role,
        ...(record.expiresAt ? { expiresAt: record.expiresAt } : {}),
        ...(record.team ? { team: record.team } : {}),
      },
    });
    const token = formatToken(id, secret);
    registerSecret(token);
    const { hash: _hash, ...view } = record;
    return { ...view, token };
  }

  async list(): Promise<TokenView[]> {
    const [records, lastUsed] = await Promise.all([
      this.redis.hvals(this.key),
      this.redis.hgetall(this.lastUsedKey),
    ]);
    return records
      .map((raw) => JSON.parse(raw) as TokenRecord)
      .map((record) => toView(record, lastUsed[record.id]))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async count(): Promise<number> {
    return this.redis.hlen(this.key);
  }

  async revoke(idOrName: string, actor: string): Promise<TokenView> {
    const tokens = await this.list();
    const token = tokens.find((item) => item.id === idOrName || item.name === idOrName);
    if (!token) throw new NotFoundError(`unknown token ${JSON.stringify(idOrName)} (token list shows them)`);
    await this.redis.multi().hdel(this.key, token.id).hdel(this.lastUsedKey, token.id).exec();
    await appendAudit(this.redis, this.keys, {
      actor,
      action: 'token.revoke',
      target: token.id,
      detail: { name: token.name },
    });
    return token;
  }

  /** The token's record when it is valid; undefined otherwise. */
  async verify(presented: string): Promise<TokenView | undefined> {
    const check = await this.check(presented);
    return check.ok ? check.token : undefined;
  }

  /** Valid, unknown (or a wrong secret) or expired; a valid use is recorded as the last use. */
  async check(presented: string, now = Date.now()): Promise<TokenCheck> {
    const match = TOKEN_PATTERN.exec(presented);
    if (!match) return { ok: false, reason: 'unknown' };
    const id = match[1]!;
    const [raw, lastUsed] = await Promise.all([
      this.redis.hget(this.key, id),
      this.redis.hget(this.lastUsedKey, id),
    ]);
    if (!raw) return { ok: false, reason: 'unknown' };
    const record = JSON.parse(raw) as TokenRecord;
    const expected = Buffer.from(record.hash, 'hex');
    const actual = Buffer.from(sha256(match[2]!), 'hex');
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual))
      return { ok: false, reason: 'unknown' };
    registerSecret(presented);
    if (record.expiresAt && Date.parse(record.expiresAt) <= now)
      return { ok: false, reason: 'expired', token: toView(record, lastUsed ?? undefined) };
    let used = lastUsed ?? undefined;
    if (!used || now - Date.parse(used) >= LAST_USED_RESOLUTION_MS) {
      used = new Date(now).toISOString();
      // Only while the token still exists: a revoke between the read and here leaves nothing behind.
      if ((await this.redis.hexists(this.key, id)) === 1) await this.redis.hset(this.lastUsedKey, id, used);
    }
    return { ok: true, token: toView(record, used) };
  }
}

function toView(record: TokenRecord, lastUsedAt: string | undefined): TokenView {
  const { hash: _hash, ...view } = record;
  return lastUsedAt ? { ...view, lastUsedAt } : view;
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
