// One attempt of one delivery, run by a worker's notify job: POST the stored
// body with the event, the delivery id and an HMAC-SHA256 signature of the
// body under the webhook's secret (GitHub's header shape) — and, within a
// rotation's window, X-Switchyard-Signature-256-Previous under the secret it
// replaced. The receiver's answer (status, a few headers, the start of its
// body: webhook-answer.ts) is kept with the attempt. A 2xx answer delivers; any other answer, a timeout or a connection error is recorded and
// thrown, so BullMQ retries with backoff until the attempts run out. A worker
// killed mid-attempt leaves the job stalled; BullMQ gives it to another worker,
// which sends it again (receivers deduplicate by X-Switchyard-Delivery).
import { createHmac } from 'node:crypto';
import { boundedMessage } from '../../safety/index.js';
import { readAnswer } from './webhook-answer.js';
import type { ReceiverAnswer, SigningSecrets, WebhookStore } from './webhook-store.js';

export const DELIVERY_TIMEOUT_MS = 10_000;

/** `sha256=<hex>`: what X-Switchyard-Signature-256 carries for this body. */
export function signatureOf(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The headers of one POST: the event, the delivery, and one signature per secret that signs now. */
export function deliveryHeaders(
  record: { event: string; deliveryId: string; body: string; redeliveryOf?: string },
  secrets: SigningSecrets,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Switchyard-Webhook',
    'x-switchyard-event': record.event,
    'x-switchyard-delivery': record.deliveryId,
    'x-switchyard-signature-256': signatureOf(secrets.current, record.body),
    ...(secrets.previous !== undefined
      ? { 'x-switchyard-signature-256-previous': signatureOf(secrets.previous, record.body) }
      : {}),
    ...(record.redeliveryOf ? { 'x-switchyard-redelivery-of': record.redeliveryOf } : {}),
  };
}

export class DeliveryFailedError extends Error {}

export interface DeliveryAttemptInfo {
  /** True on the last attempt BullMQ will make: a failure ends the delivery as failed. */
  finalAttempt: boolean;
  timeoutMs?: number;
}

/** Delivers once; resolves on a 2xx, throws DeliveryFailedError (after recording) otherwise. */
export async function deliverWebhook(
  store: WebhookStore,
  deliveryId: string,
  attempt: DeliveryAttemptInfo,
): Promise<{ state: string; statusCode?: number }> {
  const record = await store.delivery(deliveryId);
  if (!record || record.state === 'delivered') return { state: record?.state ?? 'gone' };
  const secrets = await store.secretsOf(record.webhookId);
  if (secrets === null) {
    // The webhook was removed since: nothing to send to.
    await store.recordAttempt(deliveryId, undefined, 'dropped');
    return { state: 'dropped' };
  }
  const started = Date.now();
  const at = new Date(started).toISOString();
  let statusCode: number | undefined;
  let error: string | undefined;
  let response: ReceiverAnswer | undefined;
  try {
    const answer = await fetch(record.url, {
      method: 'POST',
      body: record.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(attempt.timeoutMs ?? DELIVERY_TIMEOUT_MS),
      headers: deliveryHeaders(record, secrets),
    });
    statusCode = answer.status;
    response = await readAnswer(
      answer,
      [secrets.current, secrets.previous].filter((secret) => secret !== undefined),
    );
    if (statusCode < 200 || statusCode > 299) error = `the receiver answered HTTP ${statusCode}`;
  } catch (failure) {
    const cause = (failure as Error & { cause?: Error }).cause;
    error =
      (failure as Error).name === 'TimeoutError'
        ? `no answer within ${(attempt.timeoutMs ?? DELIVERY_TIMEOUT_MS) / 1000} s`
        : boundedMessage(cause?.message ?? (failure as Error).message, 300);
  }
  const durationMs = Date.now() - started;
  const entry = {
    at,
    durationMs,
    ...(statusCode !== undefined ? { statusCode } : {}),
    ...(error ? { error } : {}),
    ...(response ? { response } : {}),
  };
  if (!error) {
    await store.recordAttempt(deliveryId, entry, 'delivered');
    return { state: 'delivered', ...(statusCode !== undefined ? { statusCode } : {}) };
  }
  await store.recordAttempt(deliveryId, entry, attempt.finalAttempt ? 'failed' : 'retrying');
  throw new DeliveryFailedError(error);
}
