// The work/notify room's door: other rooms and the shells import only from here.
export { Notifier } from './notifier.js';
export type { Notices } from './notifier.js';
export { notifyJobSchema } from './notify-job.js';
export { WebhookService } from './webhook-service.js';
export {
  checkWebhookSecret,
  checkWebhookUrl,
  DELIVERY_STATES,
  parseWebhookEvents,
  WEBHOOK_EVENTS,
} from './webhook-store.js';
export type { DeliveryView, WebhookInput, WebhookView } from './webhook-store.js';
