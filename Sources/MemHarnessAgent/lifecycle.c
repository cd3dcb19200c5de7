// The agent's one lifecycle: its modules in one ordered table, which start-up, fork, a heap capture and exit all
// walk, so that there is one lock order (as compiler-rt's sanitizer_common keeps init, stop-the-world, fork hooks and
// exit in one place).
//
// The order. First the lifecycle lock, a ticket lock (first come, first served), which forks, captures and exit take
// before anything else; then every module's locks in table order; released in reverse. A capture used to take the
// stacks lock and then the marks lock where fork_prepare took the marks lock and then the stacks lock: a capture beside
// a fork could deadlock. Both now take every module's locks in the table's order.
//
// Exit and fork. `profile` hung in 4 of 10 runs of a program whose three threads fork in a loop while main calls
// exit(): main in the exit handler and the sampler thread both waited for the sampler's write lock, and no thread held
// it but one whose fork had run its prepare handler (which takes it) and never ran its parent handler (which releases
// it). The loader's finalizer (_dl_fini, run by exit before the agent's exit handler) calls each library's
// __cxa_finalize, which unregisters that library's fork handlers: a fork in flight then finds the list emptied and
// runs no parent handler (or glibc aborts it, "array index 0 not less than array length 0", when the list shrinks
// under its loop). Two changes end it:
// - The agent's fork handlers are registered for no library (__register_atfork with no DSO handle): no finalizer
//   removes them.
// - Exit closes the gate before the loader's finalizer runs (the finalizer the program's start passes to
//   __libc_start_main is wrapped): the exiting thread takes the lifecycle and keeps it to the end of the process. A
//   fork already past its prepare handler ends first; every later fork waits in the agent's prepare handler, before
//   jemalloc's, until exit_group ends it; the exiting thread's own forks (a destructor's) go through, their children
//   tracking nothing. The exit steps (capture, last sample, record) then run after the destructors, as before, with
//   the lifecycle still held. A second thread that exits meanwhile waits the same way (the first one's exit ends the
//   process). What this costs: a destructor or atexit handler that waits for another thread's fork would wait for
//   ever (the process is ending; the agent used to hold its write lock the same way).
//
// Re-entry. A signal handler may interrupt a thread inside the agent: an allocation it makes is deferred while the
// thread holds a lock (agent.c), a fork it makes then takes no lock (its child turns heap and stack tracking off: its
// tables may be halfway through an update), and an exit it makes writes nothing (the same).
#include "agent_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool no_init(void) { return true; }

// The table. A module's place in it is its place in the lock order and in the exit order: the capture at exit first
// (the heap as the program left it), then the sampler's last sample and its `x` line, then the record, and last the
// hold for the capture's reader (the process stays alive, its files written, while its memory is read).
static const struct mh_module modules[] = {
    {"exact counts", mh_counts_init, NULL, NULL, mh_counts_child, NULL},
    {"heap capture", no_init, NULL, NULL, NULL, mh_capture_at_exit},
    {"sampler", mh_sampler_init, mh_sampler_lock, mh_sampler_unlock, mh_sampler_child, mh_sampler_at_exit},
    {"marks and record", mh_marks_init, mh_marks_lock, mh_marks_unlock, mh_marks_child, mh_record_at_exit},
    {"stacks", mh_stacks_init, mh_stacks_lock, mh_stacks_unlock, mh_stacks_child, NULL},
    {"live blocks", no_init, mh_blocks_lock, mh_blocks_unlock, mh_blocks_child, NULL},
    {"hold for the reader", no_init, NULL, NULL, NULL, mh_hold_at_exit},
    {"captures on request", mh_request_init, NULL, NULL, mh_request_child, NULL},
};
#define MODULE_COUNT (sizeof(modules) / sizeof(modules[0]))

bool mh_forked_child;
// 0 until a thread of this process begins the exit steps (a fork child starts at 0 again: its exit is its own).
static _Atomic int finishing;
static pid_t finishing_process;  // the process the exit handlers are for (a vfork child shares its memory, not its exit)
static bool exit_handler_registered;
static bool exit_steps_wanted;   // something to write at exit (a record, samples, a capture)

int32_t mh_thread_id(void) {
    struct mh_thread *thread = &mh_tls;
    if (thread->tid == 0) thread->tid = (int32_t)syscall(SYS_gettid);
    return thread->tid;
}

// ---- The lifecycle lock ---------------------------------------------------------------------------------------------
// A ticket lock: each comer takes the next ticket and waits until it is served. Recursive for its owner (exit takes it,
// then the capture at exit takes it again).
static struct {
    _Atomic uint32_t next_ticket;
    _Atomic uint32_t serving;
    _Atomic int32_t owner;
    uint32_t owner_depth;  // only the owner reads or writes it
} lifecycle;

static bool lifecycle_owned(void) {
    return atomic_load_explicit(&lifecycle.owner, memory_order_relaxed) == mh_thread_id();
}

void mh_lifecycle_enter(void) {
    if (lifecycle_owned()) {
        lifecycle.owner_depth++;
        return;
    }
    uint32_t ticket = atomic_fetch_add_explicit(&lifecycle.next_ticket, 1, memory_order_relaxed);
    for (unsigned spins = 0; atomic_load_explicit(&lifecycle.serving, memory_order_acquire) != ticket; spins++) {
        if (spins < 100) {
            mh_cpu_relax();
        } else {
            sched_yield();
        }
    }
    atomic_store_explicit(&lifecycle.owner, mh_thread_id(), memory_order_relaxed);
    lifecycle.owner_depth = 1;
}

void mh_lifecycle_leave(void) {
    if (--lifecycle.owner_depth > 0) return;
    atomic_store_explicit(&lifecycle.owner, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&lifecycle.serving, 1, memory_order_release);
}

void mh_lock_modules(void) {
    for (size_t i = 0; i < MODULE_COUNT; i++) {
        if (modules[i].lock) modules[i].lock();
    }
}

void mh_unlock_modules(void) {
    for (size_t i = MODULE_COUNT; i-- > 0;) {
        if (modules[i].unlock) modules[i].unlock();
    }
}

// ---- fork --------------------------------------------------------------------------------------------------------
// Ours run inside jemalloc's (prepare before its prepare, parent and child after its), so jemalloc's locks come after
// every lock of the agent, whose critical sections never call into jemalloc's locked paths.
static void fork_prepare(void) {
    struct mh_thread *thread = &mh_tls;
    // A fork from a signal handler that interrupted the agent (this thread holds one of its locks, or the lifecycle):
    // taking the locks would wait for itself. It forks with none, and its child trusts no table.
    if (thread->depth > 0 || lifecycle_owned()) {
        thread->forks_unlocked++;
        return;
    }
    // glibc lets its fork-handler lock go while a handler runs: waiting here for a capture or another fork to end, this
    // thread holds nothing another thread waits for, and a signal handler's allocation may wait as anywhere (deferred,
    // every allocation of a long wait would drain the thread cache and the ring). Once the locks are taken, `depth`
    // defers them.
    uint8_t forking = thread->forking;
    thread->forking = 0;
    mh_lifecycle_enter();
    mh_lock_modules();
    thread->forking = forking;
}

static void fork_parent(void) {
    struct mh_thread *thread = &mh_tls;
    if (thread->forks_unlocked > 0) {
        thread->forks_unlocked--;
        return;
    }
    mh_unlock_modules();
    mh_lifecycle_leave();
}

// fork itself, as the program calls it. glibc runs the prepare handlers one at a time under its own lock, which it
// lets go around each handler and takes again before the next: a thread can hold it while a signal handler runs, and a
// handler that allocated there waited for the agent's locks, held by another thread whose fork had run the agent's
// prepare handler and now waited for glibc's lock (1 run in about 2,000 of fork-stress). So a thread inside fork never
// waits for the agent where it may hold glibc's lock: its allocations and releases wait in its ring (agent.c) until fork
// returns, as inside the agent (not while the agent's own prepare handler waits for the lifecycle, see fork_prepare).
typedef pid_t (*fork_fn)(void);
static fork_fn next_fork;

pid_t fork(void) {
    if (next_fork == NULL) next_fork = (fork_fn)dlsym(RTLD_NEXT, "fork");
    struct mh_thread *thread = &mh_tls;
    uint8_t outer = thread->forking;  // a signal handler's fork inside a fork leaves the outer one marked
    thread->forking = 1;
    pid_t pid = next_fork();
    thread->forking = outer;  // in the child too: its thread is this one
    if (thread->depth == 0 && atomic_load_explicit(&thread->deferred_count, memory_order_relaxed) != 0) {
        mh_deferred_flush();
    }
    return pid;
}

// The child has one thread, the forking one: every lock is free again, the lifecycle's included, and the process is
// its own (its files, its exit). One that forked without the locks turns heap and stack tracking off.
static void fork_child(void) {
    struct mh_thread *thread = &mh_tls;
    bool trusted = thread->forks_unlocked == 0;
    thread->forks_unlocked = 0;
    thread->tid = 0;
    mh_forked_child = true;
    atomic_store_explicit(&lifecycle.owner, 0, memory_order_relaxed);
    atomic_store_explicit(&lifecycle.next_ticket, 0, memory_order_relaxed);
    atomic_store_explicit(&lifecycle.serving, 0, memory_order_relaxed);
    lifecycle.owner_depth = 0;
    atomic_store_explicit(&finishing, 0, memory_order_relaxed);
    finishing_process = getpid();
    if (!trusted) atomic_fetch_and_explicit(&mh_state, ~(MH_BLOCKS | MH_STACKS), memory_order_relaxed);
    for (size_t i = 0; i < MODULE_COUNT; i++) {
        if (modules[i].child) modules[i].child();
    }
    thread->depth = 0;
    thread->exit_caller.tid = 0;
    if (atomic_load_explicit(&thread->deferred_count, memory_order_relaxed) != 0) mh_deferred_flush();
}

// ---- Exit -----------------------------------------------------------------------------------------------------------
// The exit steps, once per process, in table order, with the lifecycle held (the gate closed, if it was not yet: an
// _exit, or a program whose start the agent did not see) and kept. `caller`: where the exiting thread called exit or
// _exit (its program frames), NULL when no program frame is left on it (main returned).
void mh_finish(int status, const struct mh_stopped *caller) {
    if (mh_tls.depth > 0 || mh_tls.forking) {
        // Exit from a signal handler that interrupted the agent (its tables may be halfway through an update) or a fork
        // (the lifecycle's owner may wait for the fork-handler lock this thread holds).
        mh_warn("exit from a signal handler that interrupted the agent or a fork: no record, samples or capture written at exit");
        return;
    }
    if (atomic_exchange_explicit(&finishing, 1, memory_order_acq_rel) != 0 && lifecycle_owned()) return;
    mh_lifecycle_enter();  // a second exiting thread waits here for the process to end
    for (size_t i = 0; i < MODULE_COUNT; i++) {
        if (modules[i].at_exit) modules[i].at_exit(status, caller);
    }
}

// The gate: the finalizer __libc_start_main registers with atexit (_dl_fini), wrapped. It runs after the program's
// atexit handlers and before every library's destructor and fork-handler unregistration.
typedef void (*finalizer_fn)(void);
static finalizer_fn loader_finalizer;
static bool lifecycle_started;

static void close_gate_then_finalize(void) {
    // From a signal handler that interrupted the agent, the gate could wait for this thread itself: it stays open.
    if (lifecycle_started && mh_tls.depth == 0 && !mh_tls.forking) mh_lifecycle_enter();
    if (loader_finalizer != NULL) loader_finalizer();
}

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
#if defined(__aarch64__)
#define MH_OLD_START_VERSION "GLIBC_2.17"
#else
#define MH_OLD_START_VERSION "GLIBC_2.2.5"
#endif

// The program's start passes the loader's finalizer here; the agent passes its wrapper on. A program built before
// glibc 2.34 passes its own `init` (and links the older version of this function): that version is called for it.
int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end) {
    start_fn next = (start_fn)(init != NULL ? dlvsym(RTLD_NEXT, "__libc_start_main", MH_OLD_START_VERSION)
                                            : dlsym(RTLD_NEXT, "__libc_start_main"));
    if (next == NULL) next = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    loader_finalizer = rtld_fini;
    return next(main, argc, argv, init, fini, rtld_fini != NULL ? close_gate_then_finalize : NULL, stack_end);
}

// on_exit passes the status given to exit() (or returned by main). The handler is registered by the agent's
// constructor, which runs before libc registers the loader's finalizer (_dl_fini), so it runs after every library's
// destructor and after the program's own atexit handlers: it sees the final state.
static void on_process_exit(int status, void *argument) {
    (void)argument;
    struct mh_thread *thread = &mh_tls;
    // The thread's program frames: where it called exit (the agent's exit recorded it); none when main returned.
    mh_finish(status, thread->exit_caller.tid != 0 ? &thread->exit_caller : NULL);
}

// The agent's destructor (run by _dl_fini) only covers the case where on_exit could not be registered.
__attribute__((destructor)) static void mh_finish_at_unload(void) {
    if (exit_steps_wanted && !exit_handler_registered) mh_finish(-1, NULL);
}

extern int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso_handle);

typedef void (*exit_fn)(int);
static exit_fn next_exit;

// exit, _exit and _Exit, as the program calls them: the caller's stack pointer and callee-saved registers are the
// program's last frames on this thread (the capture at exit scans them, and nothing below: the agent's exit handler,
// the atexit handlers and destructors that ran and returned there). The trampolines store them in a struct on their
// own stack and pass it on; nothing of the caller is touched.
__attribute__((noreturn, used)) MH_HIDDEN void mh_exit_from(int status, uintptr_t caller_sp, const uintptr_t *saved,
                                                            int which);

#if defined(__x86_64__)
// saved: rbx, rbp, r12, r13, r14, r15. rsp at entry is 8 mod 16; after `sub $56` it is 0 mod 16, as a call needs.
#define MH_EXIT_TRAMPOLINE(name, which)                                                                                \
    __asm__(".text\n.globl " #name "\n.type " #name ",@function\n" #name ":\n"                                      \
            "  sub $56, %rsp\n  mov %rbx, 0(%rsp)\n  mov %rbp, 8(%rsp)\n  mov %r12, 16(%rsp)\n"                       \
            "  mov %r13, 24(%rsp)\n  mov %r14, 32(%rsp)\n  mov %r15, 40(%rsp)\n"                                      \
            "  lea 64(%rsp), %rsi\n  mov %rsp, %rdx\n  mov $" #which ", %ecx\n  call mh_exit_from\n  ud2\n"          \
            ".size " #name ", .-" #name "\n")
MH_EXIT_TRAMPOLINE(exit, 0);
MH_EXIT_TRAMPOLINE(_exit, 1);
MH_EXIT_TRAMPOLINE(_Exit, 1);
#elif defined(__aarch64__)
// saved: x19...x28, x29 (the frame pointer), x30 (the return address), then the caller's sp.
#define MH_EXIT_TRAMPOLINE(name, which)                                                                                \
    __asm__(".text\n.globl " #name "\n.type " #name ",%function\n" #name ":\n"                                      \
            "  sub sp, sp, #96\n  stp x19, x20, [sp, #0]\n  stp x21, x22, [sp, #16]\n  stp x23, x24, [sp, #32]\n"      \
            "  stp x25, x26, [sp, #48]\n  stp x27, x28, [sp, #64]\n  stp x29, x30, [sp, #80]\n"                       \
            "  add x1, sp, #96\n  mov x2, sp\n  mov w3, #" #which "\n  bl mh_exit_from\n  brk #0\n"                 \
            ".size " #name ", .-" #name "\n")
MH_EXIT_TRAMPOLINE(exit, 0);
MH_EXIT_TRAMPOLINE(_exit, 1);
MH_EXIT_TRAMPOLINE(_Exit, 1);
#else
#error "the agent's exit trampolines exist for x86_64 and aarch64"
#endif

void mh_exit_from(int status, uintptr_t caller_sp, const uintptr_t *saved, int which) {
    // _exit in a vfork child (which shares this process's memory and this thread's TLS) or with nothing to write.
    if (which != 0 && !(exit_handler_registered && getpid() == finishing_process)) {
        for (;;) syscall(SYS_exit_group, status);
    }
    struct mh_thread *thread = &mh_tls;
    struct mh_stopped *caller = &thread->exit_caller;
    *caller = (struct mh_stopped){.tid = mh_thread_id(), .sp = caller_sp, .tp = mh_thread_pointer()};
    caller->pc = ((const uintptr_t *)caller_sp)[-1];
#if defined(__x86_64__)
    // Where a signal context keeps them (gregs: REG_RBX 11, REG_RBP 10, REG_R12...R15 4...7).
    static const int slots[6] = {11, 10, 4, 5, 6, 7};
    for (int i = 0; i < 6; i++) caller->registers[slots[i]] = saved[i];
    caller->fp = saved[1];
#else
    for (int i = 0; i < 12; i++) caller->registers[19 + i] = saved[i];
    caller->fp = saved[10];
    caller->pc = saved[11];
#endif
    if (which == 0) {
        exit_fn real = next_exit;
        if (real != NULL) real(status);
        // exit called before the constructor found libc's: the steps here, then the end as _exit ends.
        mh_finish(status, caller);
    } else {
        // _exit and _Exit run no exit handler, and some programs end that way (dash ends every script with _exit):
        // the files are written here, as at exit.
        mh_finish(status, caller);
    }
    for (;;) syscall(SYS_exit_group, status);
}

// ---- Start-up -------------------------------------------------------------------------------------------------------
void mh_lifecycle_start(void) {
    next_exit = (exit_fn)dlsym(RTLD_NEXT, "exit");
    next_fork = (fork_fn)dlsym(RTLD_NEXT, "fork");
    for (size_t i = 0; i < MODULE_COUNT; i++) {
        if (modules[i].init && !modules[i].init()) {
            char message[128];
            char *p = mh_put_str(message, "could not start the agent's ");
            p = mh_put_str(p, modules[i].name);
            mh_put_str(p, "; it is off")[0] = 0;
            mh_warn(message);
        }
    }
    // jemalloc registers its own fork handlers when it starts: make sure it has, so that ours run inside its
    // (prepare before its prepare, child after its child, where starting a thread is safe). For no library (no DSO
    // handle): no finalizer unregisters them while a fork may be in flight.
    mh_dallocx(mh_mallocx(1, 0), 0);
    __register_atfork(fork_prepare, fork_parent, fork_child, NULL);
    lifecycle_started = true;
    if (mh_config.record_path[0] == 0 && mh_config.heap_at_exit_path[0] == 0
        && !(mh_config.interval_ns > 0 && mh_config.samples_path[0] != 0)) {
        return;
    }
    exit_steps_wanted = true;
    finishing_process = getpid();
    exit_handler_registered = on_exit(on_process_exit, NULL) == 0;
}
