// The work/notify room's door: other rooms and the shells import only from here.
export { Notifier } from './notifier.js';
export type { Notices } from './notifier.js';
export { notifyJobSchema } from './notify-job.js';
export { WebhookService } from './webhook-service.js';
export {
  checkWebhookSecret,
  checkWebhookUrl,
  DELIVERY_EVENTS,
  DELIVERY_STATES,
  MAX_ROTATION_WINDOW_MS,
  parseWebhookEvents,
  ROTATION_WINDOW_MS,
  WEBHOOK_EVENTS,
} from './webhook-store.js';
export type {
  DeliveryRecord,
  DeliveryView,
  ReceiverAnswer,
  WebhookChanges,
  WebhookInput,
  WebhookView,
} from './webhook-store.js';
