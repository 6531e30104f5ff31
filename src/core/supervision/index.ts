// The supervision room's door: other rooms and the shells import only from here.
export type { CallPolicy, ResourceLimits } from './call-policy.js';
export { containment } from './containment.js';
export type { Containment } from './containment.js';
export { LiveStderr } from './live-stderr.js';
export { HELPER_PATH, Spawner } from './spawner.js';
export { StderrBudget } from './stderr-budget.js';
export { superviseCall } from './supervisor.js';
export type { CallOutcome, SupervisorLimits } from './supervisor.js';
