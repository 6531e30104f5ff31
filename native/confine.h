// Kernel confinement applied to a plugin process before it runs (Landlock and
// seccomp). The definitions are our own: build machines may ship older kernel
// headers than the kernel the helper runs on, and every feature is probed at
// run time.
#ifndef SY_CONFINE_H
#define SY_CONFINE_H
#include "frames.h"

/** The kernel's Landlock ABI version, 0 when Landlock is missing or disabled. */
int landlock_abi(void);

/**
 * The call's Landlock ruleset (close-on-exec), ABI >= 6: signals scoped (the
 * plugin cannot signal or ptrace its keeper, the helper or the worker); with
 * SPAWN_FILES only the request's read (read + execute) and write paths; with
 * SPAWN_NO_NETWORK no TCP bind or connect and no abstract unix socket outside
 * the call. -1 with ENOSYS when the kernel cannot, another errno when a
 * written path cannot be opened.
 */
int call_ruleset(const struct spawn_request *req, int abi);

/**
 * In the helper: call_ruleset's result from a cache (the helper owns the fd,
 * never close it), keyed by the request's flags and paths. A path's opened
 * descriptor and a built ruleset are reused for up to CACHE_FRESH_MS, after
 * which the path is looked up again (a directory replaced meanwhile is seen
 * then). -1 with *error set when there is none.
 */
int cached_ruleset(const struct spawn_request *req, int *error);

/** Whether this build and kernel can install the seccomp filter. */
int seccomp_available(void);

/**
 * In the plugin's process right before exec: no new privileges, not dumpable,
 * the seccomp filter (when `seccomp`), then the ruleset (when >= 0). 0 or -1 (errno).
 */
int confine_self(int ruleset, int seccomp, int no_network);
/**
 * What a serving keeper set on itself once for every confined call (confine_prepare_keeper): its
 * plugins' processes inherit it, so each does only the per-call steps (confine_plugin).
 */
struct confine_base {
  int prepared;
  /** The keeper has capabilities (root): each plugin's process drops them before its exec. */
  int capabilities;
};
/**
 * On a serving keeper, before its first confined call: no_new_privs, the securebits confine_self sets, and
 * whether it has capabilities to drop. 0, or -1 (errno; its calls then do all of confine_self).
 */
int confine_prepare_keeper(struct confine_base *base);
/**
 * confine_self for the process of a keeper that `base` says is prepared (else confine_self itself): the
 * seccomp filter (when `seccomp`), the ruleset, and the capabilities dropped — the same end state.
 */
int confine_plugin(int ruleset, int seccomp, int no_network, const struct confine_base *base);
/** Whether a plugin started here can be left with no capability for good (none to drop, or CAP_SETPCAP). */
int capabilities_droppable(void);
/** The seccomp filter alone, on this process and what it starts (the helper's `--filter`). 0 or -1 (errno). */
int install_seccomp(int no_network);
#endif
