// The notify job: one webhook delivery (its record holds the body; the job id
// is the delivery id) and its retry policy.
import { z } from 'zod';

export const notifyJobSchema = z.strictObject({ deliveryId: z.string().min(1) });
export type NotifyJob = z.infer<typeof notifyJobSchema>;

/** Webhook deliveries: 8 attempts, exponential backoff from 1 s (about 2 minutes in all). */
export const NOTIFY_ATTEMPTS = 8;
export const NOTIFY_BACKOFF_MS = 1_000;
