// The work/upkeep room's door: other rooms and the shells import only from here.
export * from './liveness.js';
export * from './maintenance.js';
export * from './retention.js';
export * from './schedule-service.js';
export * from './schedule-store.js';
export * from './queue-view.js';
