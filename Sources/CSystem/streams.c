#include "memharness_system.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

int memharness_prepare_standard_streams(void) {
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    // A mask is inherited through exec: a parent that started this process from a thread blocking SIGINT,
    // SIGTERM or SIGHUP (a test runner's, a Foundation Process's) would leave the run deaf to them. Unblocked
    // here, on the main thread before the run starts threads of its own: the threads made later inherit it.
    sigset_t interruptions;
    sigemptyset(&interruptions);
    sigaddset(&interruptions, SIGINT);
    sigaddset(&interruptions, SIGTERM);
    sigaddset(&interruptions, SIGHUP);
    pthread_sigmask(SIG_UNBLOCK, &interruptions, NULL);
    int reopened = 0;
    for (int descriptor = 0; descriptor <= 2; descriptor++) {
        if (fcntl(descriptor, F_GETFD) >= 0 || errno != EBADF) continue;
        // Lower numbers are open by now, so open() returns this one.
        int null = open("/dev/null", O_RDWR);
        if (null < 0) continue;  // nothing else to give it: the descriptor stays closed, as it was
        if (null != descriptor) {
            dup2(null, descriptor);
            close(null);
        }
        reopened++;
    }
    return reopened;
}
