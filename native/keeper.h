// The per-call keeper of sy-spawner (see spawner.c): a child subreaper that
// starts the plugin and, when the plugin leader exits or the helper dies (its
// parent-death signal), kills every process of the call. On KILL the helper
// SIGKILLs the keeper itself and kills what it leaves behind (spawner.c).
#ifndef SY_KEEPER_H
#define SY_KEEPER_H
#include "frames.h"
#include <stdint.h>
#include <sys/types.h>

/** How a keeper ends (the helper reads the call's outcome from its records, not from these). */
enum keeper_exit { KEEPER_DONE = 0, KEEPER_NOT_STARTED = 1 };
/** The plugin's process when it could not exec (its errno goes to the keeper through shared memory). */
enum { CHILD_EXEC_FAILED = 127 };

/**
 * The seccomp filter the helper installed on itself at its start (`--filter none|allow`), which
 * every keeper and plugin inherits at no cost per call: HELPER_FILTER_NONE when it has none (then
 * each confined call installs its own, which costs tens of microseconds a call).
 */
enum helper_filter { HELPER_FILTER_NONE = 0, HELPER_FILTER_ALLOW_NETWORK = 1, HELPER_FILTER_NO_NETWORK = 2 };
/** Set by the helper at its start, before it forks any keeper. */
extern enum helper_filter helper_filter;

/** Runs in the forked keeper of one call; never returns. */
void keeper_main(const struct spawn_request *req, pid_t helper, int devnull, int in_r, int out_w, int err_w,
                 int status_w) __attribute__((noreturn));

/**
 * A serving keeper: forked once per slot, in the slot's cgroups when `limits`, it runs the calls the
 * helper sends on `ctl` one after another (ORDER_SPAWN, u32 length, the SPAWN payload, with the call's stdin,
 * stdout, stderr and status pipes and its Landlock ruleset as SCM_RIGHTS), each ended by closing its
 * status pipe once nothing of it runs. ORDER_KILL, u32 call id: kill the running call. A call the helper
 * had to kill, or one ended by a signal (the helper's death, an outside kill), retires the keeper
 * once nothing of the call runs; so does the helper's end of `ctl` closing. At its first confined call
 * it sets no_new_privs and the no-root securebits on itself (confine_prepare_keeper), which every plugin it
 * starts after that inherits: a confined helper's keepers serve only confined calls.
 * Never returns.
 */
void keeper_serve(int ctl, pid_t helper, int devnull, unsigned slot, int limits) __attribute__((noreturn));

#endif
