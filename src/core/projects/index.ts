// The projects room's door: other rooms and the shells import only from here.
export * from './project-lock.js';
export * from './project-service.js';
