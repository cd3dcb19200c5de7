// A replica process (a test binary re-run by a memory expectation, filtered to one test) must not outlive
// the test process that started it. The spawn (CSystem's memharness_spawn, through ChildProcess) already asks
// the kernel for SIGKILL when the parent thread ends; at load, before any test code runs, the replica asks
// again and exits at once when the parent is already gone, and tells a replica from a process a replica
// started (which inherits the variable). Swift has no load-time hook, and prctl(2) is variadic, so this
// lives here. Starting and waiting for replicas is ChildProcess's, like every other child's.
#define _GNU_SOURCE
#include "memharness_testing.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

static pid_t replica_parent = 0;

static pid_t expected_parent(void) {
    const char *text = getenv(MEMHARNESS_TESTING_PARENT_PID_VARIABLE);
    if (text == NULL || *text == '\0') return 0;
    char *end = NULL;
    long value = strtol(text, &end, 10);
    return (end != NULL && *end == '\0' && value > 0) ? (pid_t)value : 0;
}

__attribute__((constructor)) static void memharness_testing_replica_start(void) {
    pid_t parent = expected_parent();
    if (parent == 0) return;
    if (getppid() != parent) {
        // A grandchild (a process the replica started inherits the variable) while the parent lives:
        // not a replica. The parent gone already: an orphaned replica, which must not run the test.
        if (kill(parent, 0) != 0 && errno == ESRCH) _exit(70);
        return;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The parent may have ended between the check and prctl: then nothing will send the signal.
    if (getppid() != parent) _exit(70);
    replica_parent = parent;
}

int memharness_testing_is_replica_of_live_parent(void) {
    return replica_parent != 0 && getppid() == replica_parent;
}
