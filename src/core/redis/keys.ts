// The one Redis vocabulary: every key and pub/sub channel Switchyard owns,
// under one configurable prefix so several installations can share a Redis.
// No other module builds a key or a channel name, and a Lua script gets every
// key it touches as KEYS (never a prefix to build one from). What travels on
// each channel is in its room's codec (batch-messages.ts, operation-messages.ts).
export const DEFAULT_PREFIX = 'switchyard';

export function keysFor(prefix: string = DEFAULT_PREFIX) {
  return {
    prefix,
    // plugin registry
    plugins: `${prefix}:plugins`,
    pluginHealth: `${prefix}:plugin-health`,
    pluginLogs: (id: string) => `${prefix}:plugin-logs:${id}`,
    callMetrics: `${prefix}:metrics:calls`,
    /** Replaced with every change of what a call's checks read (call-state.ts). */
    callState: `${prefix}:call-state`,
    /** Per plugin: the calls holding a slot of its concurrency cap, by lease expiry (plugin-caps.ts). */
    capHolders: (id: string) => `${prefix}:cap-holders:${id}`,
    /** Per plugin: its calls started within the rate cap's window, by start time (plugin-caps.ts). */
    capCalls: (id: string) => `${prefix}:cap-calls:${id}`,
    // projects, audit, access
    projects: `${prefix}:projects`,
    audit: `${prefix}:audit`,
    tokens: `${prefix}:tokens`,
    /** When each token was last used (apart from the tokens, so a late write never revives a revoked one). */
    tokensLastUsed: `${prefix}:tokens:last-used`,
    schedules: `${prefix}:schedules`,
    /** Schedule name → id (unique names, taken with HSETNX). */
    scheduleNames: `${prefix}:schedule-names`,
    /** Schedule id → its last run and the last batch it started. */
    scheduleRuns: `${prefix}:schedule-runs`,
    /** Held while one run of a schedule decides (skip or start): two runs at once never both start a batch. */
    scheduleRunGuard: (id: string) => `${prefix}:schedule-run-guard:${id}`,
    // operations
    operations: `${prefix}:operations`,
    operation: (id: string) => `${prefix}:operation:${id}`,
    operationsByTime: `${prefix}:operations-by-time`,
    /** 'served' → the highest operation turn taken; 'r:<requester>' → its last turn (operation-turns.ts). */
    operationTurns: `${prefix}:operation-turns`,
    operationLogs: (id: string) => `${prefix}:operation-logs:${id}`,
    idempotency: (key: string) => `${prefix}:idempotency:${key}`,
    /** One directory's operation lock, by projectLockName (its real root), whatever ids name it. */
    projectLock: (name: string) => `${prefix}:project-lock:${name}`,
    fencing: `${prefix}:fencing`,
    // batches
    batches: `${prefix}:batches`,
    batch: (id: string) => `${prefix}:batch:${id}`,
    batchResults: (id: string) => `${prefix}:batch-results:${id}`,
    /** Per batch: project id → its outcome's status (a results page sorts by these, not by the results). */
    batchStatuses: (id: string) => `${prefix}:batch-statuses:${id}`,
    batchProjects: (id: string) => `${prefix}:batch-projects:${id}`,
    latestInspection: `${prefix}:latest-inspection`,
    // the fair queue of inspections (batches/fair-queue.ts, docs/adr/0010-fair-share-inspections.md)
    /** Batch id → its fair-queue state (JSON: cursor, ranges given back, class, unit, requester, slices out). */
    fairBatches: `${prefix}:fair:batches`,
    /** Slice id (`<batchId>.<n>`, its job's id) → the slice handed out (JSON), until its job ends. */
    fairSlices: `${prefix}:fair:slices`,
    /** '<class>/<unit>' → the unit's virtual time; 'u:<class>/<unit>/<requester>' → the requester's last turn. */
    fairVtimes: `${prefix}:fair:vtimes`,
    /** Moves when a batch enters while another waits: large slices running give their rest back. */
    fairGeneration: `${prefix}:fair:generation`,
    /** Pick and turn counters of the fair queue. */
    fairCounters: `${prefix}:fair:counters`,
    /** Worker identity → '<inspect slots>|<expires ms>' (how many slices the queue buffers). */
    fairWorkerSlots: `${prefix}:fair:worker-slots`,
    /** Slice id → the worker whose job runs it; a slice held by a worker whose slots expired leaves the buffer count. */
    fairHolders: `${prefix}:fair:holders`,
    /** Team → its weight (`team set`); a team not here weighs 1. */
    teams: `${prefix}:teams`,
    /** Per plugin: project id → the facts of its latest successful inspection (fleet-facts.ts). */
    fleetFacts: (pluginId: string) => `${prefix}:fleet-facts:${pluginId}`,
    /** Per plugin: the fleet-facts hash's project ids in page order (a sorted set, fleet-facts.ts fleetIdKey). */
    fleetIndex: (pluginId: string) => `${prefix}:fleet-index:${pluginId}`,
    // rollouts (work/rollouts)
    /** One rollout's record: its plan, state, cursor and counts (rollout-store.ts). */
    rollout: (id: string) => `${prefix}:rollout:${id}`,
    /** Per rollout: the selected project ids in wave order (a list, fixed at creation). */
    rolloutProjects: (id: string) => `${prefix}:rollout-projects:${id}`,
    /** Per rollout: project id → its state in the rollout (pending, starting, running, an end). */
    rolloutStates: (id: string) => `${prefix}:rollout-states:${id}`,
    /** Per rollout: project id → the id of the operation it runs as. */
    rolloutOperations: (id: string) => `${prefix}:rollout-operations:${id}`,
    /** Per rollout with --preview-action: project id → its preview's state (pending, starting, running, an end). */
    rolloutPreviewStates: (id: string) => `${prefix}:rollout-preview-states:${id}`,
    /** Per rollout with --preview-action: project id → the id of its preview operation. */
    rolloutPreviewOperations: (id: string) => `${prefix}:rollout-preview-operations:${id}`,
    /** Per rollout: the project ids in flight (`starting` or `running`), all the sweep reads (rollout-step.lua). */
    rolloutInFlight: (id: string) => `${prefix}:rollout-in-flight:${id}`,
    /** An Idempotency-Key of POST /rollouts (or /retry), scoped to its requester (a hash of both): `<rollout id> <request hash>`. */
    rolloutIdempotency: (scoped: string) => `${prefix}:rollout-idempotency:${scoped}`,
    rolloutsByTime: `${prefix}:rollouts-by-time`,
    /** The rollouts the sweep looks at: not ended, or ended with operations still to record. */
    rolloutsActive: `${prefix}:rollouts-active`,
    /** Operation id → the rollout it belongs to (an operation's end advances its rollout). */
    rolloutOfOperation: `${prefix}:rollout-of-operation`,
    // webhooks (work/notify)
    /** Webhook id → its view (JSON), never the secret. */
    webhooks: `${prefix}:webhooks`,
    /** Webhook id → its signing secret, apart from the views so no listing can carry it. */
    webhookSecrets: `${prefix}:webhook-secrets`,
    /** Webhook id → the secret a rotation replaced and until when it still signs (JSON). */
    webhookPreviousSecrets: `${prefix}:webhook-previous-secrets`,
    /** One delivery's record (JSON): event, body, state and every attempt. */
    webhookDelivery: (id: string) => `${prefix}:webhook-delivery:${id}`,
    /** Delivery ids by creation time: all of them, and one webhook's. */
    webhookDeliveries: `${prefix}:webhook-deliveries`,
    webhookDeliveriesOf: (webhookId: string) => `${prefix}:webhook-deliveries:${webhookId}`,
    // liveness
    schedulerHeartbeat: `${prefix}:scheduler-heartbeat`,
    /** Per worker process: the confinement its calls get (confinement-report.ts). */
    workerConfinement: `${prefix}:worker-confinement`,
    /** Per worker process: what each of its call slots runs now and when it last took work (worker-slots.ts). */
    workerSlots: (worker: string) => `${prefix}:worker-slots:${worker}`,
    // pub/sub channels
    batchEvents: (id: string) => `${prefix}:batch-events:${id}`,
    /** An operation's new state, each time one is written (operation-follow.ts listens). */
    operationEvents: (id: string) => `${prefix}:operation-events:${id}`,
    /** An operation id, when its cancel was requested while it runs. */
    operationCancelChannel: `${prefix}:operation-cancel`,
    /** An operation's call started or ended on some worker (operation priority). */
    operationActivityChannel: `${prefix}:operation-activity`,
    /** A batch id, when `batch cancel` asks workers to stop its running calls. */
    batchCancel: `${prefix}:batch-cancel`,
    // BullMQ's own keys live under this prefix
    bullPrefix: `${prefix}:bull`,
  };
}

export type Keys = ReturnType<typeof keysFor>;
