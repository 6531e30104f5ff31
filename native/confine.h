// Kernel confinement applied to a plugin process before it runs (Landlock).
// The definitions are our own: build machines may ship older kernel headers
// than the kernel the helper runs on, and every feature is probed at run time.
#ifndef SY_CONFINE_H
#define SY_CONFINE_H

/** The kernel's Landlock ABI version, 0 when Landlock is missing or disabled. */
int landlock_abi(void);

/**
 * A ruleset fd (close-on-exec) that scopes signals (ABI >= 6): a process under
 * it cannot signal or ptrace anything outside its own domain, so a plugin can
 * reach neither its keeper, nor the helper, nor the worker. -1 when the kernel
 * cannot (errno says why).
 */
int signal_scope_ruleset(void);

/** Called in the plugin's process right before exec: no new privileges, then the ruleset. 0 or -1 (errno). */
int confine_self(int ruleset);
#endif
