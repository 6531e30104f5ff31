// API tokens with roles. A token is `sy_<id>_<secret>` (token-format.ts); only
// the SHA-256 of the secret is stored, and it is compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { appendAudit } from './audit.js';
import { InvalidInputError, NotFoundError } from './errors.js';
import type { Keys } from './keys.js';
import { registerSecret } from './redact.js';
import { TOKEN_PATTERN, formatToken } from './token-format.js';

export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface TokenRecord {
  id: string;
  name: string;
  role: Role;
  hash: string;
  createdAt: string;
  createdBy: string;
}

export type TokenView = Omit<TokenRecord, 'hash'>;

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

  async create(name: string, role: string, actor: string): Promise<TokenView & { token: string }> {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
      throw new InvalidInputError('token name must be 1–64 characters of letters, digits, . _ -');
    }
    if (!(ROLES as readonly string[]).includes(role))
      throw new InvalidInputError(`role must be one of ${ROLES.join(', ')}`);
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
    };
    await this.redis.hset(this.key, id, JSON.stringify(record));
    await appendAudit(this.redis, this.keys, {
      actor,
      action: 'token.create',
      target: id,
      detail: { name, role },
    });
    const token = formatToken(id, secret);
    registerSecret(token);
    const { hash: _hash, ...view } = record;
    return { ...view, token };
  }

  async list(): Promise<TokenView[]> {
    return (await this.redis.hvals(this.key))
      .map((raw) => JSON.parse(raw) as TokenRecord)
      .map(({ hash: _hash, ...view }) => view)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async count(): Promise<number> {
    return this.redis.hlen(this.key);
  }

  async revoke(idOrName: string, actor: string): Promise<TokenView> {
    const tokens = await this.list();
    const token = tokens.find((item) => item.id === idOrName || item.name === idOrName);
    if (!token) throw new NotFoundError(`unknown token ${JSON.stringify(idOrName)} (token list shows them)`);
    await this.redis.hdel(this.key, token.id);
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
    const match = TOKEN_PATTERN.exec(presented);
    if (!match) return undefined;
    const raw = await this.redis.hget(this.key, match[1]!);
    if (!raw) return undefined;
    const record = JSON.parse(raw) as TokenRecord;
    const expected = Buffer.from(record.hash, 'hex');
    const actual = Buffer.from(sha256(match[2]!), 'hex');
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
    registerSecret(presented);
    const { hash: _hash, ...view } = record;
    return view;
  }
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
