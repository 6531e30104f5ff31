// The per-call keeper of sy-spawner (see spawner.c): a child subreaper that
// starts the plugin and, when the plugin leader exits or it is told to (SIGTERM
// from the helper, or its parent-death signal), kills every process of the call.
#ifndef SY_KEEPER_H
#define SY_KEEPER_H
#include <stdint.h>
#include <sys/types.h>

/** What a keeper tells the helper on its status pipe: 'P' leader pid, 'F' errno (no start), 'X' wait status. */
struct record {
  char type;
  int32_t value;
} __attribute__((packed));

struct spawn_request {
  const char *path, *cwd;
  char **argv, **envp;
};

/** Runs in the forked keeper; never returns. */
void keeper_main(const struct spawn_request *req, pid_t helper, int devnull, int in_r, int out_w, int err_w,
                 int status_w) __attribute__((noreturn));
#endif
