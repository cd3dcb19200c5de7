// The replica side of memory expectations' replica processes (MemHarnessTesting): who is a replica.
#ifndef MEMHARNESS_TESTING_H
#define MEMHARNESS_TESTING_H

#ifndef __linux__
#error "memharness builds on Linux only: replica processes use prctl(PR_SET_PDEATHSIG)"
#endif

#include <sys/types.h>

/// The environment variable that carries the parent's process id to a replica.
#define MEMHARNESS_TESTING_PARENT_PID_VARIABLE "MEMHARNESS_TESTING_PARENT_PID"

/// 1 when this process was started as a replica by a parent that is still its parent, else 0.
/// The check a load-time constructor makes; see replica.c.
int memharness_testing_is_replica_of_live_parent(void);

#endif
