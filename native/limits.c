// Placeholder until the cgroup pool lands: rlimits only (limits.h).
#define _GNU_SOURCE
#include "limits.h"
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

void limits_init(void) {}
unsigned limits_available(void) { return LIMIT_CPU | LIMIT_FILE_SIZE; }
void limits_print_probe(void) { printf("limits-memory rlimit-as\nlimits-processes none\n"); }
int limits_prepare(unsigned slot, const struct limits *limits) {
  (void)slot;
  (void)limits;
  return 0;
}
int limits_watch(unsigned slot, const struct limits *limits, struct limit_watch *watch) {
  (void)slot;
  (void)limits;
  *watch = (struct limit_watch){ -1, -1, -1, -1, 0, 0 };
  return 0;
}
static int set(int resource, unsigned long long soft, unsigned long long hard) {
  struct rlimit limit = { soft, hard };
  return setrlimit(resource, &limit);
}
int limits_apply(const struct limits *l, const struct limit_watch *watch) {
  (void)watch;
  if (l->cpu_seconds && set(RLIMIT_CPU, l->cpu_seconds, l->cpu_seconds + 1)) return -1;
  if (l->file_size && set(RLIMIT_FSIZE, l->file_size, l->file_size)) return -1;
  if (l->open_files && set(RLIMIT_NOFILE, l->open_files, l->open_files)) return -1;
  if (l->memory && set(RLIMIT_AS, l->memory, l->memory)) return -1;
  return 0;
}
unsigned limits_hit(const struct limit_watch *watch) {
  (void)watch;
  return 0;
}
unsigned limits_of_status(int status) {
  if (!WIFSIGNALED(status)) return 0;
  if (WTERMSIG(status) == SIGXCPU) return LIMIT_CPU;
  if (WTERMSIG(status) == SIGXFSZ) return LIMIT_FILE_SIZE;
  return 0;
}
void limits_cleanup(void) {}
