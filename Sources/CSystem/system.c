#define _GNU_SOURCE
#include "memharness_system.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int memharness_rename_exchange(const char *a, const char *b) {
    // The raw system call: glibc's renameat2 wrapper exists since 2.28, the syscall since Linux 3.15.
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

int memharness_library_path_of_symbol(const char *symbol, char *buffer, unsigned long size) {
    void *address = dlsym(RTLD_DEFAULT, symbol);
    Dl_info info;
    if (address == NULL || dladdr(address, &info) == 0 || info.dli_fname == NULL) return -1;
    // The main executable's name is not a shared library: a statically linked symbol.
    if (strstr(info.dli_fname, ".so") == NULL) return -1;
    size_t length = strlen(info.dli_fname);
    if (length + 1 > size) return -1;
    memcpy(buffer, info.dli_fname, length + 1);
    return 0;
}

// In the child, between fork and exec: only async-signal-safe calls. On failure the errno goes to the
// parent through `report` (close-on-exec, so a successful exec closes it and the parent reads nothing).
static void become_child(const memharness_spawn_request *request, pid_t parent, int report) {
    if (request->new_process_group) setpgid(0, 0);
    if (request->die_with_parent) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        // The parent may have died before the call: then no signal will ever come.
        if (getppid() != parent) _exit(127);
    }
    // Dispositions the harness set (SIGPIPE ignored, handlers for SIGINT...) must not reach the program.
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    for (int signal = 1; signal < NSIG; signal++) {
        if (signal != SIGKILL && signal != SIGSTOP) sigaction(signal, &default_action, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (request->working_directory != NULL && chdir(request->working_directory) != 0) {
        int error = errno;
        ssize_t ignored = write(report, &error, sizeof error);
        (void)ignored;
        _exit(127);
    }
    int null = open("/dev/null", O_RDWR);
    int fds[3] = {request->stdin_fd, request->stdout_fd, request->stderr_fd};
    for (int target = 0; target < 3; target++) {
        int source = fds[target] >= 0 ? fds[target] : null;
        if (source >= 0 && source != target) dup2(source, target);
    }
    execve(request->path, request->argv, request->envp);
    int error = errno;
    ssize_t ignored = write(report, &error, sizeof error);
    (void)ignored;
    _exit(127);
}

int memharness_spawn(const memharness_spawn_request *request, pid_t *pid_out) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int error = errno;
        close(report[0]);
        close(report[1]);
        errno = error;
        return -1;
    }
    if (pid == 0) {
        close(report[0]);
        become_child(request, parent, report[1]);
    }
    close(report[1]);
    int child_error = 0;
    ssize_t count;
    do {
        count = read(report[0], &child_error, sizeof child_error);
    } while (count < 0 && errno == EINTR);
    close(report[0]);
    if (count == (ssize_t)sizeof child_error) {
        // The exec failed: reap the child, which exits at once, and report its errno.
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        errno = child_error;
        return -1;
    }
    *pid_out = pid;
    return 0;
}

int memharness_pipe(int descriptors[2]) { return pipe2(descriptors, O_CLOEXEC); }

static int64_t nanoseconds(struct timeval time) { return (int64_t)time.tv_sec * 1000000000 + (int64_t)time.tv_usec * 1000; }

static int reap(pid_t pid, int options, memharness_wait_result *result) {
    int status = 0;
    struct rusage usage;
    memset(&usage, 0, sizeof usage);
    pid_t done;
    do {
        done = wait4(pid, &status, options, &usage);
    } while (done < 0 && errno == EINTR);
    if (done <= 0) return done;
    result->exited = WIFEXITED(status) ? 1 : 0;
    result->status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    result->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    result->max_rss_kib = usage.ru_maxrss;
    result->user_ns = nanoseconds(usage.ru_utime);
    result->system_ns = nanoseconds(usage.ru_stime);
    return 1;
}

static int64_t now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

// When `pid` has ended (a zombie, not yet reaped) and led a process group of its own, kills what is left of
// that group: what the child started must not outlive it. Before the reap, so the group's id cannot have
// been reused by then.
static void end_group_of_ended(pid_t pid) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int status;
    do {
        status = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
    } while (status < 0 && errno == EINTR);
    if (status == 0 && info.si_pid == pid && getpgid(pid) == pid) kill(-pid, SIGKILL);
}

int memharness_wait(pid_t pid, int64_t timeout_ns, memharness_wait_result *result) {
    int64_t deadline = timeout_ns < 0 ? -1 : now_ns() + timeout_ns;
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    for (;;) {
        end_group_of_ended(pid);
        int done = reap(pid, WNOHANG, result);
        if (done != 0) {
            if (pidfd >= 0) close(pidfd);
            return done;
        }
        int64_t left = deadline < 0 ? -1 : deadline - now_ns();
        if (deadline >= 0 && left <= 0) {
            if (pidfd >= 0) close(pidfd);
            return 0;
        }
        // Sleep until the child ends (pidfd becomes readable) or the deadline; without pidfd (kernels
        // before 5.3) wake every 10 ms to ask again.
        int wait_ms = left < 0 ? -1 : (int)((left + 999999) / 1000000);
        if (pidfd >= 0) {
            struct pollfd entry = {.fd = pidfd, .events = POLLIN};
            poll(&entry, 1, wait_ms);
        } else {
            struct timespec pause = {.tv_sec = 0, .tv_nsec = 10000000};
            nanosleep(&pause, NULL);
        }
    }
}

int memharness_kill_group(pid_t group, int signal) { return kill(-group, signal); }

int memharness_become_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1); }

// Child process groups the interruption handler kills: a fixed table of atomics, so the handler needs no lock.
#define MEMHARNESS_CHILD_SLOTS 256
static _Atomic pid_t children[MEMHARNESS_CHILD_SLOTS];
static _Atomic int interruption;
// The write end of the running cleanup guard's pipe, -1 when there is none: registrations go to it too.
static _Atomic int guard_descriptor = -1;

// One message to the guard: a group to kill should we die (> 0), one that ended (< 0), or "all clean" (0).
// Four bytes, fewer than PIPE_BUF: the kernel writes them at once, never interleaved with another.
static void tell_guard(int32_t message) {
    int descriptor = atomic_load(&guard_descriptor);
    if (descriptor < 0) return;
    ssize_t written;
    do {
        written = write(descriptor, &message, sizeof message);
    } while (written < 0 && errno == EINTR);
}

int memharness_child_register(pid_t group) {
    for (int slot = 0; slot < MEMHARNESS_CHILD_SLOTS; slot++) {
        pid_t empty = 0;
        if (atomic_compare_exchange_strong(&children[slot], &empty, group)) {
            tell_guard((int32_t)group);
            // A signal that came before the registration found nothing to kill: kill it now.
            if (atomic_load(&interruption) != 0) kill(-group, SIGKILL);
            return 0;
        }
    }
    return -1;
}

void memharness_child_unregister(pid_t group) {
    for (int slot = 0; slot < MEMHARNESS_CHILD_SLOTS; slot++) {
        pid_t expected = group;
        if (atomic_compare_exchange_strong(&children[slot], &expected, 0)) {
            tell_guard(-(int32_t)group);
            return;
        }
    }
}

static void on_interruption(int signal) {
    int first = 0;
    if (!atomic_compare_exchange_strong(&interruption, &first, signal)) {
        // A second signal: the user insists. Children are already killed; end now.
        struct sigaction default_action;
        memset(&default_action, 0, sizeof default_action);
        default_action.sa_handler = SIG_DFL;
        sigaction(signal, &default_action, NULL);
        raise(signal);
        return;
    }
    for (int slot = 0; slot < MEMHARNESS_CHILD_SLOTS; slot++) {
        pid_t group = atomic_load(&children[slot]);
        if (group > 0) kill(-group, SIGKILL);
    }
}

void memharness_interruption_install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_interruption;
    sigemptyset(&action.sa_mask);
    // No SA_RESTART: a blocking wait returns with EINTR and the run notices the interruption at once.
    int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (int index = 0; index < 3; index++) sigaction(signals[index], &action, NULL);
}

int memharness_interruption_signal(void) { return atomic_load(&interruption); }

// Reads the guard's messages until "all clean" (returns 1) or the end of the pipe (returns 0: the process
// died), keeping the case process groups that are running in `groups`.
static int follow_run(int input, pid_t *groups, int capacity) {
    int32_t message = 0;
    size_t have = 0;
    for (;;) {
        ssize_t count = read(input, (char *)&message + have, sizeof message - have);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) return 0;
        have += (size_t)count;
        if (have < sizeof message) continue;
        have = 0;
        if (message == 0) return 1;
        for (int slot = 0; slot < capacity; slot++) {
            if (message > 0 && groups[slot] == 0) {
                groups[slot] = message;
                break;
            }
            if (message < 0 && groups[slot] == -message) {
                groups[slot] = 0;
                break;
            }
        }
    }
}

// The guard, in the forked child: only async-signal-safe calls until the exec of rm.
static void guard(int input, char *const *arguments, const char *lock_path, pid_t parent) {
    // The guard must not be killed by what stops the run (a terminal's SIGINT reaches the whole group).
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    setsid();
    // A guard stopped with its run (SIGSTOP or SIGTSTP to every process of the tree) would stay stopped once the
    // run is killed: nothing continues a process of a session of its own. The parent's death continues it, so it
    // reads the end of the pipe and cleans up; a SIGCONT while it runs changes nothing.
    prctl(PR_SET_PDEATHSIG, SIGCONT);
    pid_t groups[MEMHARNESS_CHILD_SLOTS] = {0};
    if (follow_run(input, groups, MEMHARNESS_CHILD_SLOTS)) _exit(0);  // the process ended cleanly and said so
    // The process died with cases running: their programs die with it (PDEATHSIG), but not what those started.
    for (int slot = 0; slot < MEMHARNESS_CHILD_SLOTS; slot++) {
        if (groups[slot] > 0) kill(-groups[slot], SIGKILL);
    }
    // The pipe closes while the process is still closing its other descriptors, the lock's among them.
    // The kernel reparents us only after that: wait for it (at most 5 s), so the lock is free to test.
    for (int tries = 0; tries < 5000 && getppid() == parent; tries++) {
        struct timespec millisecond = {0, 1000000};
        nanosleep(&millisecond, NULL);
    }
    if (lock_path != NULL) {
        int fd = open(lock_path, O_RDWR | O_CLOEXEC);
        // Removed only while we hold it: a run that holds it now keeps it.
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) unlink(lock_path);
        if (fd >= 0) close(fd);
    }
    char *const environment[] = {NULL};
    execve("/bin/rm", arguments, environment);
    _exit(127);
}

int memharness_cleanup_guard_start(const char *const *paths, int count, const char *lock_path) {
    // Built before the fork: the child may not allocate. "rm -rf --" and the paths, NULL-terminated.
    if (count < 0 || count > 16) {
        errno = EINVAL;
        return -1;
    }
    char *arguments[16 + 4];
    arguments[0] = "rm";
    arguments[1] = "-rf";
    arguments[2] = "--";
    for (int index = 0; index < count; index++) arguments[3 + index] = (char *)paths[index];
    arguments[3 + count] = NULL;
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int error = errno;
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        errno = error;
        return -1;
    }
    if (pid == 0) {
        close(pipe_fds[1]);
        guard(pipe_fds[0], arguments, lock_path, parent);
    }
    close(pipe_fds[0]);
    atomic_store(&guard_descriptor, pipe_fds[1]);
    // The guard is reparented once we end; we never wait for it (it outlives us by the time rm takes).
    return pipe_fds[1];
}

void memharness_cleanup_guard_finish(int descriptor, int clean) {
    if (clean) tell_guard(0);
    atomic_store(&guard_descriptor, -1);
    close(descriptor);
}

int memharness_semaphore_wait_until(sem_t *semaphore, int64_t deadline_ns) {
    struct timespec deadline = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
    int status;
    do {
        status = sem_clockwait(semaphore, CLOCK_MONOTONIC, &deadline);
    } while (status != 0 && errno == EINTR);
    return status;
}
