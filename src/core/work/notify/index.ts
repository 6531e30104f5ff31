// The work/notify room's door: other rooms and the shells import only from here.
export * from './notifier.js';
export * from './notify-job.js';
export * from './webhook-delivery.js';
export * from './webhook-service.js';
export * from './webhook-store.js';
