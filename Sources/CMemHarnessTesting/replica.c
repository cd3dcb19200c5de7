// A replica process (a test binary re-run by a memory expectation, filtered to one test) must not outlive
// the test process that started it: at load, before any test code runs, it asks the kernel for SIGKILL when
// its parent thread ends (the parent starts every replica from a thread that lives until the replica has
// been reaped), and exits at once when the parent is already gone. Swift has no load-time hook, and
// prctl(2) is variadic, so both live here.
#define _GNU_SOURCE
#include "memharness_testing.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

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

static int64_t now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int memharness_testing_wait_child(pid_t pid, int64_t timeout_ns, int *status) {
    int64_t deadline = now_ns() + (timeout_ns > 0 ? timeout_ns : 0);
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    for (;;) {
        // WNOWAIT: the ended child stays a zombie, so its id (and its process group's) cannot be reused
        // before the group is killed below.
        siginfo_t info = {0};
        int checked = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
        if (checked == 0 && info.si_pid == pid) {
            if (pidfd >= 0) close(pidfd);
            kill(-pid, SIGKILL);
            while (waitpid(pid, status, 0) < 0) {
                if (errno != EINTR) return -1;
            }
            return 1;
        }
        if (checked < 0 && errno != EINTR) {
            int saved = errno;
            if (pidfd >= 0) close(pidfd);
            errno = saved;
            return -1;
        }
        int64_t left = deadline - now_ns();
        if (left <= 0) {
            if (pidfd >= 0) close(pidfd);
            return 0;
        }
        if (pidfd >= 0) {
            struct pollfd entry = {.fd = pidfd, .events = POLLIN, .revents = 0};
            // Whole milliseconds, rounded up so the loop does not spin just before the deadline.
            int64_t wait_ms = (left + 999999) / 1000000;
            poll(&entry, 1, wait_ms > 1000 ? 1000 : (int)wait_ms);
        } else {
            struct timespec pause = {.tv_sec = 0, .tv_nsec = 1000000};
            nanosleep(&pause, NULL);
        }
    }
}
