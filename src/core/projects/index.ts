// The projects room's door: other rooms and the shells import only from here.
export { lapseMarginMs, ProjectLock } from './project-lock.js';
export { checkLabels, ProjectService } from './project-service.js';
export type { AddOptions, Project, ProjectListing, ScanOptions, ScanReport } from './project-service.js';
