// Kernel confinement applied to a plugin process before it runs (Landlock and
// seccomp). The definitions are our own: build machines may ship older kernel
// headers than the kernel the helper runs on, and every feature is probed at
// run time.
#ifndef SY_CONFINE_H
#define SY_CONFINE_H
#include "keeper.h"

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

/** Whether this build and kernel can install the seccomp filter. */
int seccomp_available(void);

/**
 * In the plugin's process right before exec: no new privileges, not dumpable,
 * the seccomp filter (when `seccomp`), then the ruleset (when >= 0). 0 or -1 (errno).
 */
int confine_self(int ruleset, int seccomp, int no_network);
#endif
