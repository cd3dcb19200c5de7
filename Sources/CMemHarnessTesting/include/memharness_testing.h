// Process control for memory expectations' replica processes (MemHarnessTesting).
#ifndef MEMHARNESS_TESTING_H
#define MEMHARNESS_TESTING_H

#ifndef __linux__
#error "memharness builds on Linux only: replica processes use prctl(PR_SET_PDEATHSIG) and pidfd_open"
#endif

#include <stdint.h>
#include <sys/types.h>

/// The environment variable that carries the parent's process id to a replica.
#define MEMHARNESS_TESTING_PARENT_PID_VARIABLE "MEMHARNESS_TESTING_PARENT_PID"

/// Waits for child `pid` (a process group leader) to end, at most `timeout_ns` nanoseconds; once it has
/// ended, kills what is left of its process group and reaps it: 1 with its wait status in `status`, 0 when
/// it is still running at the deadline, -1 with errno set when it cannot be waited for. Sleeps in poll(2)
/// on a pidfd (Linux 5.3+); falls back to checking every millisecond on older kernels.
int memharness_testing_wait_child(pid_t pid, int64_t timeout_ns, int *status);

/// 1 when this process was started as a replica by a parent that is still its parent, else 0.
/// The check a load-time constructor makes; see replica.c.
int memharness_testing_is_replica_of_live_parent(void);

#endif
