// The stop signal of heap captures stays deliverable.
//
// Threads that block every signal (libdispatch's workers do, so does a process started with a mask that blocks
// it) could not be stopped. While the heap is tracked, the agent's pthread_sigmask and sigprocmask take the stop
// signal out of any set they are asked to block, as the Boehm collector's wrappers do; the thread that starts the
// process gets it unblocked at start-up. Without heap tracking both forward unchanged.
#include "agent_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);
static _Atomic(mask_fn) next_pthread_sigmask;
static _Atomic(mask_fn) next_sigprocmask;

int mh_raw_sigprocmask(int how, const void *set, void *old) {
    return (int)syscall(SYS_rt_sigprocmask, how, set, old, (size_t)(_NSIG / 8));
}

static const sigset_t *without_stop_signal(int how, const sigset_t *set, sigset_t *copy) {
    if (set == NULL || how == SIG_UNBLOCK || !mh_blocks_ready() || !sigismember(set, MH_STOP_SIGNAL)) return set;
    *copy = *set;
    sigdelset(copy, MH_STOP_SIGNAL);
    return copy;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
    sigset_t copy;
    set = without_stop_signal(how, set, &copy);
    mask_fn next = atomic_load_explicit(&next_pthread_sigmask, memory_order_acquire);
    if (next != NULL) return next(how, set, old);
    return mh_raw_sigprocmask(how, set, old) == 0 ? 0 : errno;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
    sigset_t copy;
    set = without_stop_signal(how, set, &copy);
    mask_fn next = atomic_load_explicit(&next_sigprocmask, memory_order_acquire);
    return next != NULL ? next(how, set, old) : mh_raw_sigprocmask(how, set, old);
}

void mh_signal_masks_start(void) {
    atomic_store_explicit(&next_pthread_sigmask, (mask_fn)dlsym(RTLD_NEXT, "pthread_sigmask"), memory_order_release);
    atomic_store_explicit(&next_sigprocmask, (mask_fn)dlsym(RTLD_NEXT, "sigprocmask"), memory_order_release);
    if (!mh_blocks_ready()) return;
    sigset_t stop_only;
    sigemptyset(&stop_only);
    sigaddset(&stop_only, MH_STOP_SIGNAL);
    mh_raw_sigprocmask(SIG_UNBLOCK, &stop_only, NULL);
}
