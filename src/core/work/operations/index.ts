// The work/operations room's door: other rooms and the shells import only from here.
export * from './operate-job.js';
export * from './operation-follow.js';
export * from './operation-messages.js';
export * from './operation-notices.js';
export * from './operation-runner.js';
export * from './operation-service.js';
export * from './operation-store.js';
