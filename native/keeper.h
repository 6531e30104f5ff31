// The per-call keeper of sy-spawner (see spawner.c): a child subreaper that
// starts the plugin and, when the plugin leader exits or the helper dies (its
// parent-death signal), kills every process of the call. On KILL the helper
// SIGKILLs the keeper itself and kills what it leaves behind (spawner.c).
#ifndef SY_KEEPER_H
#define SY_KEEPER_H
#include <stdint.h>
#include <sys/types.h>

/**
 * What a keeper tells the helper on its status pipe: 'P' leader pid, 'F' errno
 * (no start), 'X' wait status, 'L' the limits the call hit by a wait status (LIMIT_CPU,
 * LIMIT_FILE_SIZE) or by its tmpfs (LIMIT_DISK, LIMIT_FILE_SIZE; isolate.h); sent once nothing of the call runs; the helper adds those its
 * cgroups counted, limits_end); a serving keeper then 'R' when it retires, and 'E':
 * the call is over, nothing of it runs.
 */
struct record {
  char type;
  int32_t value;
} __attribute__((packed));

/**
 * SPAWN flags: confine the plugin (signal scoping) where the kernel can; refuse
 * to start it where it cannot; `path` names an open file of the host
 * (/proc/<pid>/fd/<n>) to start by descriptor, not a path to look up again.
 */
enum {
  SPAWN_CONFINE = 1u << 0,
  SPAWN_REQUIRE_CONFINEMENT = 1u << 1,
  SPAWN_EXEC_FD = 1u << 2,
  /** Landlock file rules: only the policy's read=/write= paths (confine.h). */
  SPAWN_FILES = 1u << 3,
  /** No TCP bind/connect, no new socket (socketpair stays), no abstract unix socket outside the call. */
  SPAWN_NO_NETWORK = 1u << 4,
  /** The policy's resource limits (limits.h). */
  SPAWN_LIMITS = 1u << 5,
  /**
   * The plugin's process in its own IPC and mount namespaces, with a tmpfs of `disk=` bytes on `tmp=`
   * (isolate.h). Asked only where the helper said it can (LIMIT_DISK in HELLO).
   */
  SPAWN_ISOLATE = 1u << 6,
};

/** Limits a call hit ('L' record, S_LIMIT frame). */
enum {
  LIMIT_MEMORY = 1u << 0,
  LIMIT_CPU = 1u << 1,
  LIMIT_FILE_SIZE = 1u << 2,
  LIMIT_PROCESSES = 1u << 3,
  /** The call's tmpfs filled up (isolate.h); in HELLO: this helper can isolate calls. */
  LIMIT_DISK = 1u << 4,
};

/** Resource limits of one call; 0 = not limited. */
struct limits {
  unsigned long long memory, cpu_seconds, file_size, open_files, processes, disk;
};

struct spawn_request {
  const char *path, *cwd;
  char **argv, **envp;
  unsigned flags;
  /** NULL-terminated: the Landlock paths (read-only and read-write) when SPAWN_FILES. */
  const char **read_paths, **write_paths;
  struct limits limits;
  /** SPAWN_ISOLATE: where the call's tmpfs goes (its TMPDIR; its parent is made read-only), or NULL. */
  const char *tmp;
  /** The helper's slot for this call (its index in the call table): a pool of reusable cgroups (limits.h). */
  unsigned slot;
  /** Set by the helper (confine.h cached_ruleset): the call's Landlock ruleset, or -1 and why not. */
  int ruleset, ruleset_error;
};

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
extern enum helper_filter helper_filter;

/** Little-endian u32s of the helper's frames and of a serving keeper's requests. */
static inline void put_u32(char *at, uint32_t value) {
  at[0] = (char)(value & 0xff);
  at[1] = (char)((value >> 8) & 0xff);
  at[2] = (char)((value >> 16) & 0xff);
  at[3] = (char)((value >> 24) & 0xff);
}

static inline uint32_t get_u32(const char *at) {
  const unsigned char *u = (const unsigned char *)at;
  return (uint32_t)u[0] | ((uint32_t)u[1] << 8) | ((uint32_t)u[2] << 16) | ((uint32_t)u[3] << 24);
}

/** Runs in the forked keeper of one call; never returns. */
void keeper_main(const struct spawn_request *req, pid_t helper, int devnull, int in_r, int out_w, int err_w,
                 int status_w) __attribute__((noreturn));

/**
 * A serving keeper: forked once per slot, in the slot's cgroups when `limits`, it runs the calls the
 * helper sends on `ctl` one after another ('S', u32 length, the SPAWN payload, with the call's stdin,
 * stdout, stderr and status pipes and its Landlock ruleset as SCM_RIGHTS), each ended by closing its
 * status pipe once nothing of it runs. 'K', u32 call id: kill the running call. A call the helper
 * had to kill, or one ended by a signal (the helper's death, an outside kill), retires the keeper
 * once nothing of the call runs; so does the helper's end of `ctl` closing. At its first confined call
 * it sets no_new_privs and the no-root securebits on itself (confine_prepare_keeper), which every plugin it
 * starts after that inherits: a confined helper's keepers serve only confined calls.
 * Never returns.
 */
void keeper_serve(int ctl, pid_t helper, int devnull, unsigned slot, int limits) __attribute__((noreturn));

/** Parses a SPAWN payload (spawner.c) into `req`, its strings pointing into `payload`; `*list` to free. 0 or -1. */
int parse_spawn(char *payload, size_t len, struct spawn_request *req, char ***list);
#endif
