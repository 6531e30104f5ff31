// The per-call keeper of sy-spawner (see spawner.c): a child subreaper that
// starts the plugin and, when the plugin leader exits or the helper dies (its
// parent-death signal), kills every process of the call. On KILL the helper
// SIGKILLs the keeper itself and kills what it leaves behind (spawner.c).
#ifndef SY_KEEPER_H
#define SY_KEEPER_H
#include <stdint.h>
#include <sys/types.h>

/** What a keeper tells the helper on its status pipe: 'P' leader pid, 'F' errno (no start), 'X' wait status. */
struct record {
  char type;
  int32_t value;
} __attribute__((packed));

/**
 * SPAWN flags: confine the plugin (signal scoping) where the kernel can; refuse
 * to start it where it cannot; `path` names an open file of the host
 * (/proc/<pid>/fd/<n>) to start by descriptor, not a path to look up again.
 */
enum { SPAWN_CONFINE = 1u << 0, SPAWN_REQUIRE_CONFINEMENT = 1u << 1, SPAWN_EXEC_FD = 1u << 2 };

struct spawn_request {
  const char *path, *cwd;
  char **argv, **envp;
  unsigned flags;
};

/** How a keeper ends (the helper reads the call's outcome from its records, not from these). */
enum keeper_exit { KEEPER_DONE = 0, KEEPER_NOT_STARTED = 1 };
/** The plugin's process when it could not exec (its errno goes to the keeper through shared memory). */
enum { CHILD_EXEC_FAILED = 127 };

/** Runs in the forked keeper; never returns. */
void keeper_main(const struct spawn_request *req, pid_t helper, int devnull, int in_r, int out_w, int err_w,
                 int status_w) __attribute__((noreturn));
#endif
