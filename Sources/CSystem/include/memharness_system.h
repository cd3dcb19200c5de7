// System calls the Swift Glibc module does not expose (they need _GNU_SOURCE, are raw syscalls, or must
// run between fork and exec, where Swift code must not run).
#ifndef MEMHARNESS_SYSTEM_H
#define MEMHARNESS_SYSTEM_H

#ifndef __linux__
#error "memharness builds on Linux only: CSystem wraps Linux system calls (renameat2, pidfd_open, prctl)"
#endif

#include <semaphore.h>
#include <stdint.h>
#include <sys/types.h>

/// Atomically exchanges the directory entries `a` and `b` (renameat2 with RENAME_EXCHANGE): both must
/// exist; afterwards each name refers to what the other did. Returns 0, or -1 with errno set.
int memharness_rename_exchange(const char *a, const char *b);

/// Writes the path of the shared library that defines `symbol` in this process (dlsym in the global
/// scope, then dladdr) into `buffer` (NUL-terminated, at most `size` bytes). Returns 0, or -1 when the
/// symbol is not found, lives in the main executable, or the path does not fit.
int memharness_library_path_of_symbol(const char *symbol, char *buffer, unsigned long size);

/// Opens a file in `directory` that has no name (O_TMPFILE; where the file system has none, a file created and
/// unlinked at once), for reading and writing: nothing of it is left, whatever ends the process. Returns the
/// descriptor (close-on-exec), or -1 with errno set.
int memharness_open_unnamed_file(const char *directory);

/// Sends `length` bytes of `bytes` as one message on `socket` with descriptor `fd` attached (SCM_RIGHTS), never
/// raising SIGPIPE. Returns the bytes sent, or -1 with errno set.
long memharness_send_descriptor(int socket, const void *bytes, unsigned long length, int fd);

/// How to start a child process.
typedef struct {
    /// The executable's path (no PATH search).
    const char *path;
    /// Arguments, NULL-terminated, argv[0] first.
    char *const *argv;
    /// Environment, NULL-terminated.
    char *const *envp;
    /// Descriptors for the child's stdin, stdout and stderr; -1 gives it /dev/null.
    int stdin_fd;
    int stdout_fd;
    int stderr_fd;
    /// Non-zero: the child gets SIGKILL when the thread that spawned it ends (PR_SET_PDEATHSIG), and exits at
    /// once if its parent is already gone when that is set, so it never outlives the run.
    int die_with_parent;
    /// Non-zero: the child leads a new process group, so `memharness_kill_group` reaches what it starts too.
    int new_process_group;
    /// The child's working directory; NULL: the parent's.
    const char *working_directory;
} memharness_spawn_request;

/// Starts a child (fork, then in the child only async-signal-safe calls: process group, parent-death
/// signal, signal dispositions and mask reset to defaults, descriptors, execve). Returns 0 with `*pid_out`
/// set; or -1 with errno set: the fork failed, or the exec failed (the child's errno: ENOENT, EACCES,
/// ENOEXEC...), in which case the child has already been reaped.
int memharness_spawn(const memharness_spawn_request *request, pid_t *pid_out);

/// Makes a pipe whose two ends close on exec (pipe2 with O_CLOEXEC, at once: no child started meanwhile by
/// another thread inherits them); a child gets an end only as a standard stream. 0, or -1 with errno set.
int memharness_pipe(int descriptors[2]);

/// How a waited-for child ended.
typedef struct {
    /// 1 when it exited (then `status` is its exit status), 0 when a signal killed it (then `signal`).
    int exited;
    int status;
    int signal;
    /// Its resident set high-water mark from the kernel (ru_maxrss), KiB.
    long max_rss_kib;
    /// Its CPU time (and that of the children it waited for), nanoseconds.
    int64_t user_ns;
    int64_t system_ns;
} memharness_wait_result;

/// Waits for child `pid` for at most `timeout_ns` (negative: no limit) without polling (pidfd + poll).
/// Returns 1 when the child ended (`*result` filled, the child reaped), 0 when the time ran out (the child
/// still runs), -1 with errno on error. A child that led its own process group has what is left of the group
/// killed (SIGKILL) before it is reaped: nothing it started outlives it.
int memharness_wait(pid_t pid, int64_t timeout_ns, memharness_wait_result *result);

/// Sends `signal` to the process group `group` (a child spawned with `new_process_group`); 0 or -1 with errno.
int memharness_kill_group(pid_t group, int signal);

/// Makes this process the parent of its orphaned descendants (PR_SET_CHILD_SUBREAPER): a case's own children
/// that lose their parent come to us, to be killed and reaped instead of running on. 0 or -1 with errno.
int memharness_become_subreaper(void);

/// Starts a guard process that cleans up after this process however it ends (even SIGKILL): when the
/// returned descriptor's other end closes (this process exited or died) the guard kills the process groups of
/// the children registered then (`memharness_child_register` tells it), takes and removes the lock file
/// `lock_path` if no one holds it, then removes the trees `paths` (rm -rf) and exits.
/// `memharness_cleanup_guard_finish` with `clean` tells the guard all is clean: it exits without doing anything.
/// Returns the descriptor (close-on-exec), or -1 with errno set. One guard at a time.
int memharness_cleanup_guard_start(const char *const *paths, int count, const char *lock_path);
/// Ends the guard's watch: with `clean` non-zero it exits without touching anything; otherwise it cleans up
/// as if this process had died. Closes `descriptor`.
void memharness_cleanup_guard_finish(int descriptor, int clean);

/// Installs handlers for SIGINT, SIGTERM and SIGHUP: the first such signal kills every registered child's
/// process group (SIGKILL) and is remembered (`memharness_interruption_signal`); a second one ends this
/// process at once with the default action. Everything the handler does is async-signal-safe.
void memharness_interruption_install(void);

/// The signal that interrupted the run (SIGINT, SIGTERM, SIGHUP), or 0.
int memharness_interruption_signal(void);

/// Registers a child process group for the interruption handler to kill, and for the cleanup guard to kill
/// should this process die; 0, or -1 when the table (256 children) is full. Unregister it once the child is reaped.
int memharness_child_register(pid_t group);
void memharness_child_unregister(pid_t group);

/// Waits on `semaphore` until the CLOCK_MONOTONIC clock reads `deadline_ns` (sem_clockwait, glibc 2.30+: the
/// harness's one clock, which a change of the wall clock does not move), waiting again when a signal
/// interrupts. Returns 0 when the semaphore was posted, or -1 with errno (ETIMEDOUT when the deadline passed).
int memharness_semaphore_wait_until(sem_t *semaphore, int64_t deadline_ns);

/// Readies this process's standard streams before anything else runs: SIGPIPE and SIGXFSZ ignored (a closed
/// pipe on stdout or stderr, or a file-size limit such as `ulimit -f`, then fails a write with EPIPE or EFBIG
/// instead of killing the process before its report is written), and a closed stdin, stdout or stderr (a
/// shell's `>&-`) given /dev/null, so its number does not go to the first file the process opens (a lock, a
/// report file), where a message meant for the terminal would land. SIGINT, SIGTERM and SIGHUP are unblocked on
/// the calling thread (a blocked mask is inherited through exec). Returns how many of the three it reopened.
int memharness_prepare_standard_streams(void);

#endif
