// The platform room's door: other rooms and the shells import only from here.
export * from './concurrency.js';
export * from './error-catalogue.js';
export * from './environment.js';
export * from './errors.js';
export * from './job-errors.js';
export * from './list-limits.js';
export * from './log.js';
export * from './run-until-signalled.js';
export * from './sleep.js';
export * from './without-undefined.js';
