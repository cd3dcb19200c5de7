// Stopping the world for a heap capture: signals, as the Boehm collector does on Linux, not ptrace as LeakSanitizer
// does. The capturing thread holds the lifecycle and every lock of the agent (so no thread is halfway through a table
// update), then sends MH_STOP_SIGNAL to every other thread of /proc/self/task with tgkill; each one's handler saves its
// registers, stack pointer and thread pointer into a slot and waits on a futex until the capture is over. A thread
// blocked in a system call is interrupted and its registers are those of the call (SA_RESTART resumes it
// afterwards), so a pointer held only in a register of a sleeping thread is a root. Why not ptrace: a process cannot
// trace threads of its own thread group, so LeakSanitizer clones a tracer task, which needs the kernel's ptrace
// permission (Yama) and is far more code; why not a forked snapshot: the child has only the forking thread, so every
// other thread's registers would be lost. A thread that blocks the signal is not stopped (the capture says how many,
// and is marked approximate; sigmask.c keeps the signal deliverable); the agent's sampler and request threads are
// skipped (they hold no pointer into the program's heap). Nothing here allocates: /proc is read with raw calls.
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static struct {
    _Atomic uint32_t generation;  // odd while a capture holds the world
    _Atomic uint32_t arrived;
    _Atomic uint32_t left;
    _Atomic uint32_t slots_taken;
    struct mh_stopped threads[MH_MAX_THREADS];
} stop;
static bool handler_installed;

uintptr_t mh_thread_pointer(void) {
    uintptr_t tp = 0;
#if defined(__x86_64__)
    __asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
    __asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
#endif
    return tp;
}

static long futex(_Atomic uint32_t *word, int operation, uint32_t value, const struct timespec *timeout) {
    return syscall(SYS_futex, (uint32_t *)word, operation, value, timeout, NULL, 0);
}

static void stop_handler(int signal, siginfo_t *info, void *context) {
    (void)signal;
    int saved_errno = errno;
    uint32_t generation = atomic_load_explicit(&stop.generation, memory_order_acquire);
    // A signal that is not ours (another process's) or arrives after the capture ended: nothing to do.
    if ((generation & 1) == 0 || info->si_code != SI_TKILL || info->si_pid != getpid()) {
        errno = saved_errno;
        return;
    }
    uint32_t slot = atomic_fetch_add_explicit(&stop.slots_taken, 1, memory_order_relaxed);
    if (slot < MH_MAX_THREADS) {
        struct mh_stopped *me = &stop.threads[slot];
        ucontext_t *ucontext = context;
        me->tid = (int32_t)syscall(SYS_gettid);
        me->tp = mh_thread_pointer();
#if defined(__x86_64__)
        for (int i = 0; i < MH_REGISTERS; i++) me->registers[i] = (uintptr_t)ucontext->uc_mcontext.gregs[i];
        me->sp = (uintptr_t)ucontext->uc_mcontext.gregs[REG_RSP];
        me->pc = (uintptr_t)ucontext->uc_mcontext.gregs[REG_RIP];
        me->fp = (uintptr_t)ucontext->uc_mcontext.gregs[REG_RBP];
#elif defined(__aarch64__)
        for (int i = 0; i < 31; i++) me->registers[i] = (uintptr_t)ucontext->uc_mcontext.regs[i];
        me->registers[31] = me->sp = (uintptr_t)ucontext->uc_mcontext.sp;
        me->registers[32] = me->pc = (uintptr_t)ucontext->uc_mcontext.pc;
        me->fp = (uintptr_t)ucontext->uc_mcontext.regs[29];
#else
        me->sp = (uintptr_t)__builtin_frame_address(0);
#endif
    }
    atomic_fetch_add_explicit(&stop.arrived, 1, memory_order_release);
    futex(&stop.arrived, FUTEX_WAKE_PRIVATE, 1, NULL);
    while (atomic_load_explicit(&stop.generation, memory_order_acquire) == generation) {
        futex(&stop.generation, FUTEX_WAIT_PRIVATE, generation, NULL);
    }
    atomic_fetch_add_explicit(&stop.left, 1, memory_order_release);
    futex(&stop.left, FUTEX_WAKE_PRIVATE, 1, NULL);
    errno = saved_errno;
}

// Installed once and kept: a signal still pending for a thread that blocked it must never meet the default
// action (which ends the process). A program that handles the same signal itself makes captures fail.
const char *mh_world_prepare(void) {
    if (handler_installed) return NULL;
    struct sigaction current;
    if (sigaction(MH_STOP_SIGNAL, NULL, &current) != 0) return "cannot read the stop signal's disposition";
    if ((current.sa_flags & SA_SIGINFO) ? current.sa_sigaction != NULL
                                        : (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN)) {
        return "the program handles SIGRTMAX-3 itself, which the capture uses to stop threads";
    }
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = stop_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&action.sa_mask);
    if (sigaction(MH_STOP_SIGNAL, &action, NULL) != 0) return "cannot install the stop signal's handler";
    handler_installed = true;
    return NULL;
}

// The thread ids of /proc/self/task, read with getdents64 (opendir allocates); the count, or -1.
static int list_threads(int32_t *tids, int capacity) {
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buffer[8192];
    int count = 0;
    for (;;) {
        long read = syscall(SYS_getdents64, fd, buffer, sizeof(buffer));
        if (read <= 0) break;
        for (long offset = 0; offset < read;) {
            struct {
                uint64_t inode;
                int64_t offset;
                unsigned short length;
                unsigned char type;
                char name[];
            } *entry = (void *)(buffer + offset);
            int32_t tid = 0;
            const char *name = entry->name;
            for (; *name >= '0' && *name <= '9'; name++) tid = tid * 10 + (*name - '0');
            if (*name == 0 && tid > 0 && count < capacity) tids[count++] = tid;
            offset += entry->length;
        }
    }
    close(fd);
    return count;
}

static bool contains(const int32_t *tids, int count, int32_t tid) {
    for (int i = 0; i < count; i++) {
        if (tids[i] == tid) return true;
    }
    return false;
}

// Waits until `arrived` reaches `expected` or the deadline passes; the count that arrived.
static uint32_t wait_arrivals(uint32_t expected, int64_t deadline_ns) {
    for (;;) {
        uint32_t arrived = atomic_load_explicit(&stop.arrived, memory_order_acquire);
        int64_t now = mh_now_ns();
        if (arrived >= expected || now >= deadline_ns) return arrived;
        int64_t left = deadline_ns - now;
        if (left > 10000000) left = 10000000;
        struct timespec timeout = {.tv_sec = 0, .tv_nsec = left};
        futex(&stop.arrived, FUTEX_WAIT_PRIVATE, arrived, &timeout);
    }
}

// Signals every thread but this one, the sampler and the request thread (request.c) until no new thread appears; bounded by 1 s in all.
void mh_world_stop(struct mh_world *world) {
    int32_t self = (int32_t)syscall(SYS_gettid);
    int32_t sampler = (int32_t)mh_sampler_tid();
    int32_t requests = (int32_t)mh_request_tid();
    static int32_t tids[MH_MAX_THREADS];
    int64_t deadline = mh_now_ns() + 1000000000;
    world->signalled_count = 0;
    atomic_store_explicit(&stop.arrived, 0, memory_order_relaxed);
    atomic_store_explicit(&stop.left, 0, memory_order_relaxed);
    atomic_store_explicit(&stop.slots_taken, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&stop.generation, 1, memory_order_release);  // odd: capturing
    for (int round = 0; round < 16; round++) {
        int count = list_threads(tids, MH_MAX_THREADS);
        int sent = 0;
        for (int i = 0; i < count; i++) {
            int32_t tid = tids[i];
            if (tid == self || tid == sampler || tid == requests) continue;
            if (contains(world->signalled, world->signalled_count, tid)) continue;
            if (world->signalled_count == MH_MAX_THREADS) break;
            if (syscall(SYS_tgkill, getpid(), tid, MH_STOP_SIGNAL) == 0) {
                world->signalled[world->signalled_count++] = tid;
                sent++;
            }
        }
        if (sent == 0) break;
        wait_arrivals((uint32_t)world->signalled_count, deadline);
    }
    // A thread that exited between the listing and its signal never arrives: it is not waited for again.
    uint32_t arrived = wait_arrivals((uint32_t)world->signalled_count, deadline);
    world->unstopped = world->signalled_count - (int)arrived;
}

void mh_world_resume(struct mh_world *world) {
    uint32_t arrived = atomic_load_explicit(&stop.arrived, memory_order_acquire);
    atomic_fetch_add_explicit(&stop.generation, 1, memory_order_release);
    futex(&stop.generation, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
    // Bounded: a thread that has not left its handler in 1 s leaves it later by itself (the generation moved).
    int64_t deadline = mh_now_ns() + 1000000000;
    for (;;) {
        uint32_t left = atomic_load_explicit(&stop.left, memory_order_acquire);
        if (left >= arrived || mh_now_ns() >= deadline) break;
        struct timespec timeout = {.tv_sec = 0, .tv_nsec = 5000000};
        futex(&stop.left, FUTEX_WAIT_PRIVATE, left, &timeout);
    }
    (void)world;
}

// The threads stopped now (their states, as their handlers saved them); the count.
uint32_t mh_world_stopped(const struct mh_stopped **threads) {
    uint32_t stopped = atomic_load_explicit(&stop.slots_taken, memory_order_acquire);
    *threads = stop.threads;
    return stopped > MH_MAX_THREADS ? MH_MAX_THREADS : stopped;
}
