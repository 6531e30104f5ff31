// What a plugin returns passes through redaction before anything stores or
// shows it (docs/PROTOCOL.md §10): a viewer reads summaries, facts, warnings,
// action titles and operation output, so a secret a plugin puts there is as
// dangerous as one it prints. A result in which something was replaced says
// so with `redacted: true`.
import type { HealthResult, InspectResult, JsonValue, OperateResult } from '@switchyard/plugin-sdk/protocol';
import { REDACTED, SECRET_ENV_NAME, mayHoldSecret, redact, redactDeep } from '../safety/index.js';

/** A plugin's result as the host keeps it: `redacted` when a secret was replaced in it. */
export type Redacted<T> = T & { redacted?: true };

/** Redacts strings one by one and remembers whether any of them changed. */
class Redactor {
  changed = false;
  /** No text of the result can hold a secret (one scan of all of them): each is kept as it is. */
  readonly #allClean: boolean;

  constructor(texts?: readonly string[]) {
    this.#allClean = texts !== undefined && !mayHoldSecret(texts);
  }

  text(value: string): string {
    if (this.#allClean) return value;
    const clean = redact(value);
    if (clean !== value) this.changed = true;
    return clean;
  }

  /** A whole value known to be a secret (a fact named `db.password`). */
  secret(value: string): string {
    if (value === '' || value === REDACTED) return value;
    this.changed = true;
    return REDACTED;
  }

  json(value: JsonValue): JsonValue {
    const clean = redactDeep(value);
    if (JSON.stringify(clean) !== JSON.stringify(value)) this.changed = true;
    return clean;
  }

  mark<T>(result: T): Redacted<T> {
    return this.changed ? { ...result, redacted: true } : (result as Redacted<T>);
  }
}

export function redactInspection(result: InspectResult): Redacted<InspectResult> {
  const r = new Redactor([
    result.summary,
    ...result.facts.flatMap((fact) => [fact.id, fact.label, fact.value, fact.source, fact.warning ?? '']),
    ...result.actions.flatMap((action) => [action.name, action.description, action.risk]),
    ...result.warnings,
  ]);
  return r.mark({
    summary: r.text(result.summary),
    facts: result.facts.map((fact) => ({
      id: r.text(fact.id),
      label: r.text(fact.label),
      // A fact named like a secret (`db.password`) holds one, whatever its shape.
      value: SECRET_ENV_NAME.test(fact.id) ? r.secret(fact.value) : r.text(fact.value),
      source: r.text(fact.source),
      ...(fact.warning !== undefined ? { warning: r.text(fact.warning) } : {}),
    })),
    // An action's id stays: it is what `run` names, checked against the advertised ids.
    actions: result.actions.map((action) => ({
      id: action.id,
      name: r.text(action.name),
      description: r.text(action.description),
      risk: r.text(action.risk),
    })),
    warnings: result.warnings.map((warning) => r.text(warning)),
    observedAt: result.observedAt,
  });
}

export function redactOperation(result: OperateResult): Redacted<OperateResult> {
  const r = new Redactor();
  return r.mark({ status: result.status, summary: r.text(result.summary), output: r.json(result.output) });
}

export function redactHealth(result: HealthResult): Redacted<HealthResult> {
  const r = new Redactor();
  return r.mark({
    status: result.status,
    ...(result.message !== undefined ? { message: r.text(result.message) } : {}),
    checkedAt: result.checkedAt,
  });
}
