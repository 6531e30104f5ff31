// Teams in the fair share of the workers (docs/adr/0010-fair-share-inspections.md):
// an admin puts tokens in a team (`token create … --team T`) and gives the
// team a weight (`team set T --weight N`, default 1); the fair queue gives
// each team calls in proportion to its weight, split among its requesters.
// A requester in no team (a token without one, a local OS user) is its own
// team of weight 1.
import type { Redis } from 'ioredis';
import { appendAudit } from './audit.js';
import { InvalidInputError } from '../platform/index.js';
import type { Keys } from '../redis/index.js';

export const DEFAULT_TEAM_WEIGHT = 1;
export const MAX_TEAM_WEIGHT = 1_000;

export interface TeamView {
  team: string;
  weight: number;
  /** The names of the tokens in it. */
  tokens: string[];
}

export function checkTeamName(team: string): string {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(team))
    throw new InvalidInputError('a team name must be 1–64 characters of letters, digits, . _ -');
  return team;
}

/** The team of the token `requester` names (`token:<name>`, the api's actor, or the bare name), if it has one. */
export async function teamOf(redis: Redis, keys: Keys, requester: string): Promise<string | undefined> {
  const name = requester.startsWith('token:') ? requester.slice('token:'.length) : requester;
  for (const raw of await redis.hvals(keys.tokens)) {
    const record = JSON.parse(raw) as { name: string; team?: string };
    if (record.name === name) return record.team;
  }
  return undefined;
}

/** Sets a team's weight (whole number 1–1,000); audited. */
export async function setTeamWeight(
  redis: Redis,
  keys: Keys,
  team: string,
  weight: number,
  actor: string,
): Promise<TeamView> {
  checkTeamName(team);
  if (!Number.isInteger(weight) || weight < 1 || weight > MAX_TEAM_WEIGHT)
    throw new InvalidInputError(
      `a team weight is a whole number from 1 to ${MAX_TEAM_WEIGHT}, not ${weight}`,
    );
  await redis.hset(keys.teams, team, String(weight));
  await appendAudit(redis, keys, { actor, action: 'team.set', target: team, detail: { weight } });
  return (await listTeams(redis, keys)).find((view) => view.team === team)!;
}

/** Every team named by a token or given a weight, by name. */
export async function listTeams(redis: Redis, keys: Keys): Promise<TeamView[]> {
  const [weights, tokens] = await Promise.all([redis.hgetall(keys.teams), redis.hvals(keys.tokens)]);
  const teams = new Map<string, TeamView>();
  const view = (team: string) => {
    let found = teams.get(team);
    if (!found) {
      found = { team, weight: Number(weights[team] ?? DEFAULT_TEAM_WEIGHT), tokens: [] };
      teams.set(team, found);
    }
    return found;
  };
  for (const team of Object.keys(weights)) view(team);
  for (const raw of tokens) {
    const record = JSON.parse(raw) as { name: string; team?: string };
    if (record.team) view(record.team).tokens.push(record.name);
  }
  return [...teams.values()].sort((a, b) => a.team.localeCompare(b.team));
}
