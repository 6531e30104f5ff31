// Landlock for the keeper (confine.h): raw system calls, since glibc has no
// wrappers and the build's <linux/landlock.h> may predate the running kernel.
#define _GNU_SOURCE
#include "confine.h"
#include <errno.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self 446
#endif

#define RULESET_VERSION (1u << 0)
#define SCOPE_SIGNAL (1ull << 1)

/** struct landlock_ruleset_attr as of ABI 6 (fs, net, scoped). */
struct ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

int landlock_abi(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, RULESET_VERSION);
  return abi < 0 ? 0 : (int)abi;
}

int signal_scope_ruleset(void) {
  if (landlock_abi() < 6) {
    errno = ENOSYS;
    return -1;
  }
  struct ruleset_attr attr = { 0, 0, SCOPE_SIGNAL };
  return (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
}

int confine_self(int ruleset) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return (int)syscall(SYS_landlock_restrict_self, ruleset, 0);
}
