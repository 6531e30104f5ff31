// docs/PROTOCOL.md §9.4: the identity a running plugin echoes in `initialize` must
// equal the trusted package: protocol, id, name, version exactly; capabilities,
// requested scopes and granted scopes as sets. Shared by hosts and the kit.
import { PROTOCOL_VERSION } from './constants.js';
import type { InitializeResult } from './schemas.js';

export interface ExpectedIdentity {
  id: string;
  name: string;
  version: string;
  capabilities: readonly string[];
  requestedScopes: readonly string[];
}

/** Each difference as "field value (expected: value)"; empty when it matches. */
export function identityProblems(
  result: InitializeResult,
  expected: ExpectedIdentity,
  grants: readonly string[],
): string[] {
  const problems: string[] = [];
  const show = (value: unknown) => JSON.stringify(value);
  if (result.protocolVersion !== PROTOCOL_VERSION) {
    problems.push(`protocolVersion ${show(result.protocolVersion)} (expected: ${show(PROTOCOL_VERSION)})`);
  }
  if (result.plugin.protocolVersion !== PROTOCOL_VERSION) {
    problems.push(
      `plugin.protocolVersion ${show(result.plugin.protocolVersion)} (expected: ${show(PROTOCOL_VERSION)})`,
    );
  }
  for (const field of ['id', 'name', 'version'] as const) {
    if (result.plugin[field] !== expected[field]) {
      problems.push(`plugin.${field} ${show(result.plugin[field])} (expected: ${show(expected[field])})`);
    }
  }
  const sets = [
    ['plugin.capabilities', result.plugin.capabilities, expected.capabilities],
    ['plugin.requestedScopes', result.plugin.requestedScopes, expected.requestedScopes],
    ['grantedScopes', result.grantedScopes, grants],
  ] as const;
  for (const [field, actual, wanted] of sets) {
    if (!sameSet(actual, wanted)) problems.push(`${field} ${show(actual)} (expected: ${show(wanted)})`);
  }
  return problems;
}

export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const union = new Set([...a, ...b]).size;
  return a.length === b.length && new Set(a).size === union && new Set(b).size === union;
}
