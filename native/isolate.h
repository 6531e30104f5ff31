// Per-call namespaces of a plugin call (PROTOCOL §11): its own IPC namespace (SysV IPC and POSIX
// message queues private to the call, gone with it) and its own mount namespace, in which its
// TMPDIR is a tmpfs of the call's disk budget (gone with the call) and the scratch directory above
// it is read-only. The keeper creates the tmpfs (it keeps a descriptor of it, to see at the end
// whether the call filled it); the plugin's process, born in the new namespaces, mounts it.
// Needs CAP_SYS_ADMIN (a root worker): elsewhere the host says it is missing.
#ifndef SY_ISOLATE_H
#define SY_ISOLATE_H
#include "frames.h"
#include <limits.h>

/** What the keeper prepared for one call's namespaces. */
struct isolation {
  /** The call's tmpfs (fsmount, close-on-exec), -1 when the call has none. */
  int tmpfs;
  /** The scratch directory: tmp's parent, bound read-only over itself. */
  char parent[PATH_MAX];
};

/** The clone flags of an isolated call's plugin process. */
#define ISOLATE_CLONE_FLAGS (CLONE_NEWIPC | CLONE_NEWNS)

/** Whether this helper can isolate calls (CAP_SYS_ADMIN, a tmpfs by fsopen, the namespaces); else why not. */
int isolation_available(char *why, size_t size);
/** In the keeper before the clone: the call's tmpfs of `disk=` bytes for `tmp=`. 0, or -1 with errno. */
int isolation_prepare(const struct spawn_request *req, struct isolation *iso);
/**
 * In the plugin's process, in its new namespaces (system calls only: it shares the keeper's memory):
 * no mount event leaves them, the scratch directory read-only, the tmpfs on `tmp`. 0, or -1 with errno.
 */
int isolation_enter(const struct spawn_request *req, const struct isolation *iso);
/**
 * In the keeper once nothing of the call runs: LIMIT_DISK when the tmpfs is full (blocks or inodes),
 * LIMIT_FILE_SIZE when a file in it reached the file-size limit (a runtime that ignores SIGXFSZ only
 * sees EFBIG; the host cannot look, the tmpfs is in the call's namespace). Closes the tmpfs: its files
 * are gone.
 */
unsigned isolation_end(const struct spawn_request *req, struct isolation *iso);
/** Closes what isolation_prepare opened (a call that did not start). */
void isolation_close(struct isolation *iso);
#endif
