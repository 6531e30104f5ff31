// Bounds shared by every front, so the CLI (either mode) and the api accept the same values.

/** The most entries one list request returns (audit, batches, operations, logs). */
export const MAX_LIST_LIMIT = 1_000;
