// The access room's door: other rooms and the shells import only from here.
export * from './audit.js';
export * from './tokens.js';
export * from './teams.js';
