// Webhooks and their deliveries in Redis. A webhook's view and its signing
// secret live in two hashes, so nothing that lists or shows webhooks can
// carry the secret; a delivery is one JSON record (event, the exact body that
// is signed and sent, its state and every attempt), listed newest first.
// A rotated secret keeps signing, beside the new one, until its window ends
// (a third hash), so a receiver can move to the new secret without a gap.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { InvalidInputError, NotFoundError } from '../../platform/index.js';
import type { Keys } from '../../redis/index.js';

export const WEBHOOK_EVENTS = [
  'batch.finished',
  'batch.new-failures',
  'facts.changed',
  'schedule.failed',
  'operation.finished',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** What a delivery carries: an event, or `ping` (`webhook ping`: a test no webhook subscribes to). */
export const DELIVERY_EVENTS = [...WEBHOOK_EVENTS, 'ping'] as const;
export type DeliveryEvent = (typeof DELIVERY_EVENTS)[number];

/** What `webhook list` and GET /webhooks show: never the secret. */
export interface WebhookView {
  id: string;
  url: string;
  events: WebhookEvent[];
  /** Only this plugin's batches and operations (schedule.failed: the schedule's plugin). */
  pluginId?: string;
  createdAt: string;
  createdBy: string;
  /** False: no new event is produced for it (`webhook edit --inactive`); ping and redeliver still send. */
  active: boolean;
  /** Until when the secret a rotation replaced still signs too (X-Switchyard-Signature-256-Previous). */
  previousSecretUntil?: string;
}

/** What `webhook edit` changes; what is not given stays. */
export interface WebhookChanges {
  url?: string;
  events?: readonly string[];
  active?: boolean;
}

/** The secrets that sign a delivery now: the current one, and a rotated one within its window. */
export interface SigningSecrets {
  current: string;
  previous?: string;
}

/** How long a rotated secret keeps signing by default, and at most. */
export const ROTATION_WINDOW_MS = 24 * 3600_000;
export const MAX_ROTATION_WINDOW_MS = 7 * 24 * 3600_000;

export interface WebhookInput {
  url: string;
  events: readonly string[];
  pluginId?: string;
  secret: string;
}

export interface DeliveryAttempt {
  at: string;
  durationMs: number;
  /** The receiver's HTTP status, when it answered. */
  statusCode?: number;
  /** Why the attempt failed (timeout, connection, a non-2xx answer). */
  error?: string;
  /** What the receiver answered, bounded and made safe (webhook-answer.ts). */
  response?: ReceiverAnswer;
}

/** A receiver's answer as stored: a few headers and the start of its body, escaped and redacted. */
export interface ReceiverAnswer {
  headers: Record<string, string>;
  body: string;
  /** True when the body was longer than what is kept. */
  truncated: boolean;
}

export const DELIVERY_STATES = ['pending', 'retrying', 'delivered', 'failed', 'dropped'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface DeliveryView {
  deliveryId: string;
  webhookId: string;
  event: DeliveryEvent;
  url: string;
  createdAt: string;
  state: DeliveryState;
  attempts: DeliveryAttempt[];
  /** A redelivery: the delivery whose body it sends again (`webhook redeliver`). */
  redeliveryOf?: string;
}

/** The stored record: the view and the body every attempt sends (signed as is). */
export interface DeliveryRecord extends DeliveryView {
  body: string;
}

/** Delivery records are kept this long (and at most MAX_DELIVERIES listed). */
const DELIVERY_TTL_S = 14 * 24 * 3600;
const MAX_DELIVERIES = 10_000;
const MAX_SECRET_CHARS = 1_024;

/** `a,b` or a list → the events; an unknown name is refused, listing the valid ones. */
export function parseWebhookEvents(given: readonly string[] | string): WebhookEvent[] {
  const names = (typeof given === 'string' ? given.split(',') : given).map((name) => name.trim());
  const unknown = names.filter((name) => !(WEBHOOK_EVENTS as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0)
    throw new InvalidInputError(
      `${unknown.length > 0 ? `unknown event${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => JSON.stringify(name)).join(', ')}` : 'no event named'}; the events are ${WEBHOOK_EVENTS.join(', ')}`,
    );
  return [...new Set(names)] as WebhookEvent[];
}

/** An absolute http or https URL; anything else is refused, naming what to fix. */
export function checkWebhookUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError(
      `--url ${JSON.stringify(url)} is not a URL; give an absolute http:// or https:// URL`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new InvalidInputError(
      `--url must be http:// or https://, not ${JSON.stringify(parsed.protocol.replace(/:$/, ''))}`,
    );
  // Credentials in the URL would be stored and shown in full, and deliveries do not send them.
  if (parsed.username !== '' || parsed.password !== '')
    throw new InvalidInputError(
      '--url carries credentials (user:pass@); remove them: the receiver checks the X-Switchyard-Signature-256 of each delivery instead',
    );
  return parsed.href;
}

/** The secret as read from its file: one line, its line end dropped; never empty. */
export function checkWebhookSecret(secret: string): string {
  const value = secret.replace(/\r?\n$/, '');
  if (value.length === 0)
    throw new InvalidInputError('the webhook secret is empty; put it in the secret file');
  if (value.length > MAX_SECRET_CHARS || /[\r\n]/.test(value))
    throw new InvalidInputError(
      `the webhook secret must be one line of at most ${MAX_SECRET_CHARS} characters`,
    );
  return value;
}

export class WebhookStore {
  constructor(
    readonly redis: Redis,
    readonly keys: Keys,
  ) {}

  async add(input: WebhookInput, actor: string): Promise<WebhookView> {
    const view: WebhookView = {
      id: `wh_${randomUUID().replace(/-/g, '').slice(0, 12)}`,
      url: checkWebhookUrl(input.url),
      events: parseWebhookEvents(input.events),
      ...(input.pluginId ? { pluginId: input.pluginId } : {}),
      createdAt: new Date().toISOString(),
      createdBy: actor,
      active: true,
    };
    const secret = checkWebhookSecret(input.secret);
    await this.redis
      .multi()
      .hset(this.keys.webhooks, view.id, JSON.stringify(view))
      .hset(this.keys.webhookSecrets, view.id, secret)
      .exec();
    return view;
  }

  async list(): Promise<WebhookView[]> {
    const all = await this.redis.hvals(this.keys.webhooks);
    return all
      .map(parseView)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(id: string): Promise<WebhookView> {
    const raw = await this.redis.hget(this.keys.webhooks, id);
    if (!raw)
      throw new NotFoundError(`unknown webhook ${JSON.stringify(id)} (webhook list shows the known ones)`);
    return parseView(raw);
  }

  /** Changes the URL, the events or whether it is active; checked as `add` checks them. */
  async edit(id: string, changes: WebhookChanges): Promise<WebhookView> {
    const view = await this.get(id);
    if (changes.url === undefined && changes.events === undefined && changes.active === undefined)
      throw new InvalidInputError('nothing to change: give --url, --events, --active or --inactive');
    const edited: WebhookView = {
      ...view,
      ...(changes.url !== undefined ? { url: checkWebhookUrl(changes.url) } : {}),
      ...(changes.events !== undefined ? { events: parseWebhookEvents(changes.events) } : {}),
      ...(changes.active !== undefined ? { active: changes.active } : {}),
    };
    await this.redis.hset(this.keys.webhooks, id, JSON.stringify(edited));
    return edited;
  }

  /** A new signing secret; the old one signs too for `windowMs` (0: no longer at all). */
  async rotateSecret(id: string, secret: string, windowMs: number): Promise<WebhookView> {
    const view = await this.get(id);
    const next = checkWebhookSecret(secret);
    if (!Number.isInteger(windowMs) || windowMs < 0 || windowMs > MAX_ROTATION_WINDOW_MS)
      throw new InvalidInputError(
        `the window the old secret stays valid must be from 0 to ${MAX_ROTATION_WINDOW_MS / 3600_000} hours`,
      );
    const old = await this.redis.hget(this.keys.webhookSecrets, id);
    const { previousSecretUntil: _was, ...rest } = view;
    const until = new Date(Date.now() + windowMs).toISOString();
    const rotated: WebhookView =
      windowMs > 0 && old !== null ? { ...rest, previousSecretUntil: until } : rest;
    const write = this.redis
      .multi()
      .hset(this.keys.webhooks, id, JSON.stringify(rotated))
      .hset(this.keys.webhookSecrets, id, next);
    if (rotated.previousSecretUntil)
      write.hset(this.keys.webhookPreviousSecrets, id, JSON.stringify({ secret: old, until }));
    else write.hdel(this.keys.webhookPreviousSecrets, id);
    await write.exec();
    return rotated;
  }

  async remove(id: string): Promise<WebhookView> {
    const view = await this.get(id);
    await this.redis
      .multi()
      .hdel(this.keys.webhooks, id)
      .hdel(this.keys.webhookSecrets, id)
      .hdel(this.keys.webhookPreviousSecrets, id)
      .del(this.keys.webhookDeliveriesOf(id))
      .exec();
    return view;
  }

  /** The secrets that sign now (null: the webhook is gone); only the delivery reads them. */
  async secretsOf(id: string, now = Date.now()): Promise<SigningSecrets | null> {
    const [current, previous] = await this.redis
      .multi()
      .hget(this.keys.webhookSecrets, id)
      .hget(this.keys.webhookPreviousSecrets, id)
      .exec()
      .then((replies) => (replies ?? []).map(([, value]) => value as string | null));
    if (!current) return null;
    const old = previous ? (JSON.parse(previous) as { secret: string; until: string }) : undefined;
    return old && Date.parse(old.until) > now ? { current, previous: old.secret } : { current };
  }

  /** Records a new delivery; false when a record of that id exists already. */
  async createDelivery(record: DeliveryRecord): Promise<boolean> {
    const created = await this.redis.set(
      this.keys.webhookDelivery(record.deliveryId),
      JSON.stringify(record),
      'EX',
      DELIVERY_TTL_S,
      'NX',
    );
    if (created !== 'OK') return false;
    const score = Date.parse(record.createdAt);
    await this.redis
      .multi()
      .zadd(this.keys.webhookDeliveries, score, record.deliveryId)
      .zremrangebyrank(this.keys.webhookDeliveries, 0, -MAX_DELIVERIES - 1)
      .zadd(this.keys.webhookDeliveriesOf(record.webhookId), score, record.deliveryId)
      .zremrangebyrank(this.keys.webhookDeliveriesOf(record.webhookId), 0, -MAX_DELIVERIES - 1)
      .exec();
    return true;
  }

  async delivery(deliveryId: string): Promise<DeliveryRecord | undefined> {
    const raw = await this.redis.get(this.keys.webhookDelivery(deliveryId));
    return raw ? (JSON.parse(raw) as DeliveryRecord) : undefined;
  }

  /** One delivery, or a NotFoundError naming where the known ones are. */
  async deliveryOrFail(deliveryId: string): Promise<DeliveryRecord> {
    const record = await this.delivery(deliveryId);
    if (!record)
      throw new NotFoundError(
        `unknown delivery ${JSON.stringify(deliveryId)} (webhook deliveries shows the newest; records are kept 14 days)`,
      );
    return record;
  }

  /** Appends one attempt and sets the state (one job at a time handles a delivery). */
  async recordAttempt(deliveryId: string, attempt: DeliveryAttempt | undefined, state: DeliveryState) {
    const record = await this.delivery(deliveryId);
    if (!record) return;
    record.state = state;
    if (attempt) record.attempts.push(attempt);
    await this.redis.set(this.keys.webhookDelivery(deliveryId), JSON.stringify(record), 'KEEPTTL');
  }

  /** Newest first: every webhook's deliveries, or one webhook's. */
  async deliveries(webhookId?: string, limit = 100): Promise<DeliveryView[]> {
    if (webhookId) await this.get(webhookId);
    const index = webhookId ? this.keys.webhookDeliveriesOf(webhookId) : this.keys.webhookDeliveries;
    const ids = await this.redis.zrevrange(index, 0, limit - 1);
    if (ids.length === 0) return [];
    const raws = await this.redis.mget(...ids.map((id) => this.keys.webhookDelivery(id)));
    return raws.flatMap((raw) => {
      if (!raw) return [];
      const { body: _body, ...view } = JSON.parse(raw) as DeliveryRecord;
      return [view];
    });
  }
}

/** A stored view; one stored before `active` existed is active; a rotation window that ended is not shown. */
function parseView(raw: string): WebhookView {
  const { previousSecretUntil, ...view } = JSON.parse(raw) as Omit<WebhookView, 'active'> & {
    active?: boolean;
  };
  const rotating = previousSecretUntil !== undefined && Date.parse(previousSecretUntil) > Date.now();
  return { ...view, active: view.active ?? true, ...(rotating ? { previousSecretUntil } : {}) };
}
