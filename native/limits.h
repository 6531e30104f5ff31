// Resource limits of a plugin call (PROTOCOL §9.5): rlimits set in the plugin's
// process before exec (memory fallback, CPU time, file size, open files), and
// where the host can create cgroups (v2, or v1 controllers, as root here) a
// pool of per-slot cgroups kept by the helper for memory and processes: a
// slot is reused call after call (its limits rewritten only when they change),
// so no cgroup is created or removed per call. RLIMIT_NPROC does not bind
// root; the pids cgroup does.
#ifndef SY_LIMITS_H
#define SY_LIMITS_H
#include "frames.h"

/** Once in the helper: find the cgroup hierarchies, create this helper's pool directory, remove stale pools. */
void limits_init(void);
/** LIMIT_* bits this host can enforce (memory and processes need a cgroup, or RLIMIT_* for non-root). */
unsigned limits_available(void);
/** For `sy-spawner --probe`: one line per mechanism, e.g. "limits-memory cgroup-v1", "limits-processes none". */
void limits_print_probe(void);
/**
 * In the helper, before the keeper's fork: the slot's cgroups exist and carry these limits, their files are
 * open and the counters known (the call's baseline: read now, or as limits_end read them at the end of the
 * slot's previous call). 0, or -1 with errno.
 */
int limits_prepare(unsigned slot, const struct limits *limits);

/** What the keeper watches for one call: the slot's join files (v1 tasks, v2 cgroup.procs) and its counters before the call. */
struct limit_watch {
  int memory_procs, pids_procs;       // -1 when not used
  int memory_events, pids_events;     // descriptors of the counter files, -1 when not used
  unsigned long long oom_kills, pids_max_hits;
};
/**
 * In the keeper, before it closes the helper's descriptors: the slot's files and counters as limits_prepare
 * left them (the helper keeps each slot's files open, a keeper keeps these). 0, or -1 with errno.
 */
int limits_watch(unsigned slot, const struct limits *limits, struct limit_watch *watch);
/** Moves the calling process into the slot's cgroups (a serving keeper, once). 0, or -1 with errno. */
int limits_join(const struct limit_watch *watch);
/**
 * In the plugin's process before exec (it shares the keeper's memory: system calls only): joins the slot's
 * cgroups unless its keeper is in them (`joined`), sets the rlimits. 0, or -1 with errno.
 */
int limits_apply(const struct limits *limits, const struct limit_watch *watch, int joined);
/** In the keeper once the call has no process left: a keeper that outlived its helper removes the pool. */
void limits_keeper_end(void);
/**
 * In the helper once nothing of the slot's call runs (its keeper reaped, no orphan left): LIMIT_* bits the
 * call hit, by the slot's counters against the call's baseline (the keeper's critical path then has no
 * counter to read). What it reads is the baseline of the slot's next call (limits_prepare).
 */
unsigned limits_end(unsigned slot);
/**
 * In the helper, when something other than its own call may have run in the slot's cgroups since its last
 * call ended (its serving keeper died or was killed): the next call reads the counters before it starts.
 */
void limits_forget_baseline(unsigned slot);
/** A reaped process's wait status: SIGXCPU is LIMIT_CPU, SIGXFSZ LIMIT_FILE_SIZE, else 0. */
unsigned limits_of_status(int status);
/** At the helper's exit: remove its pool (every slot is empty then). */
void limits_cleanup(void);
#endif
