// Retention of a plugin's finished batches as host policy (CLI.md `plugin
// set --retention-batches/--retention-days`): a finished batch is kept while it
// is one of the plugin's newest `batches` finished ones OR younger than `days`
// (the host's SWITCHYARD_RETENTION_DAYS when unset). Never fewer than two are
// kept: `batch diff` and the web UI compare the newest with the one before.
import { InvalidInputError } from '../platform/index.js';

/** What an admin set for one plugin (unset: the default). */
export interface RetentionSettings {
  /** Keep at least this many of the newest finished batches, however old. */
  batches?: number;
  /** Keep every finished batch younger than this many days. */
  days?: number;
}

/** The newest finished batches of each plugin kept however old, unless set higher. */
export const DEFAULT_RETENTION_BATCHES = 2;
export const MIN_RETENTION_BATCHES = 2;
export const MAX_RETENTION_BATCHES = 100_000;
export const MAX_RETENTION_DAYS = 3_650;

/** The policy in force: `days` undefined means the host's SWITCHYARD_RETENTION_DAYS. */
export function retentionOf(settings: RetentionSettings | undefined): { batches: number; days?: number } {
  return {
    batches: settings?.batches ?? DEFAULT_RETENTION_BATCHES,
    ...(settings?.days === undefined ? {} : { days: settings.days }),
  };
}

/** InvalidInputError naming the option when a setting is out of range. */
export function checkRetentionSettings(settings: RetentionSettings): RetentionSettings {
  const { batches, days } = settings;
  if (
    batches !== undefined &&
    (!Number.isInteger(batches) || batches < MIN_RETENTION_BATCHES || batches > MAX_RETENTION_BATCHES)
  )
    throw new InvalidInputError(
      `--retention-batches must be an integer from ${MIN_RETENTION_BATCHES} to ${MAX_RETENTION_BATCHES} (two are always kept for batch diff)`,
    );
  if (days !== undefined && (!Number.isInteger(days) || days < 0 || days > MAX_RETENTION_DAYS))
    throw new InvalidInputError(`--retention-days must be an integer from 0 to ${MAX_RETENTION_DAYS}`);
  return settings;
}
