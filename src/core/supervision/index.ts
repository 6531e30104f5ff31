// The supervision room's door: other rooms and the shells import only from here.
export * from './call-policy.js';
export * from './containment.js';
export * from './exchange-errors.js';
export * from './live-stderr.js';
export * from './spawner.js';
export * from './stderr-budget.js';
export * from './stderr-tail.js';
export * from './supervisor.js';
