// The work/rollouts room's door: other rooms and the shells import only from here.
export { DEFAULT_CONCURRENCY, DEFAULT_MAX_FAILURES, DEFAULT_WAVES } from './rollout-plan.js';
export { ROLLOUT_EXPORT_FORMATS } from './rollout-export.js';
export type { RolloutExportFormat } from './rollout-export.js';
export type { RolloutSelection } from './rollout-selection.js';
export { ROLLOUT_KEY_PREFIX, RolloutService, toRolloutView } from './rollout-service.js';
export { PREVIEW_OUTPUT_MAX_CHARS } from './rollout-service.js';
export type {
  RolloutListItem,
  RolloutPreviewView,
  RolloutProjectView,
  RolloutRequest,
  RolloutRequestOptions,
  RolloutView,
  SweepReport,
} from './rollout-service.js';
export { isRolloutOver, ROLLOUT_PROJECT_STATES, ROLLOUT_STATES } from './rollout-store.js';
export type { RolloutProjectState, RolloutQuery, RolloutState } from './rollout-store.js';
