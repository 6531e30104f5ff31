// The access room's door: other rooms and the shells import only from here.
export { appendAudit, auditInto, readAudit } from './audit.js';
export type { AuditEntry, AuditInput, AuditQuery } from './audit.js';
export { AuditService } from './audit-service.js';
export { MAX_EXPIRY_MS, roleAllows, ROLES, TokenStore } from './tokens.js';
export type { Role, TokenView } from './tokens.js';
export {
  checkTeamName,
  DEFAULT_TEAM_WEIGHT,
  listTeams,
  MAX_TEAM_WEIGHT,
  setTeamWeight,
  teamOf,
} from './teams.js';
export type { TeamView } from './teams.js';
