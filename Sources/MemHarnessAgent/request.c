// Heap captures on request while the program runs (MEMHARNESS_AGENT_CAPTURE_SOCKET=SOCKET; a name starting with @ is
// in Linux's abstract namespace): the harness's captures between a server's load rounds.
//
// A thread of the agent's own ("memharness-cap", every signal blocked: the program's signals go to the program's
// threads) connects at start to the harness's SOCK_SEQPACKET socket and waits for requests. A request is one message:
// 'c', a label (at most 63 bytes), and a descriptor passed with SCM_RIGHTS (the harness's unnamed file: nothing is
// left whatever ends either process). The thread takes the capture into it as any capture (capture.c: the lifecycle,
// every module's locks, the world stopped); it is not the program's, so it gives no frame, register or stack of its
// own (it is left out of every stop, as the sampler is). With the capture written and the world still stopped, it
// answers 'w' and waits until the harness has named the blocks from the process's memory: the harness's 'r', the
// connection's end (the harness died) or MH_REQUEST_HOLD_LIMIT_NS, whichever comes first; then the world resumes. A
// capture that fails is answered 'f' and the reason, with the world resumed.
//
// Forks: a fork waits for a capture in progress (both take the lifecycle); the child has no such thread and closes its
// copy of the connection (its end is the harness's sign that the program ended). Exit: the exiting thread takes the
// lifecycle, so a capture in progress ends first and a request after it is never answered; the harness sees the
// connection close when the process ends. Nothing on the thread's path allocates.
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

// Past this the world resumes whatever the harness does: a harness that hangs never stops the program for ever.
#define MH_REQUEST_HOLD_LIMIT_NS ((int64_t)60 * 1000000000)

static char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int connection = -1;
static _Atomic pid_t request_tid;

// Connects without waiting (a full backlog, say of a program's many children the harness never answers, must not
// hold a process at its start), then blocks on the connection.
static int connect_harness(void) {
    int fd = mh_connect_socket(socket_path, SOCK_SEQPACKET | SOCK_NONBLOCK);
    if (fd >= 0 && fcntl(fd, F_SETFL, 0) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

// The world is stopped and the capture written: says so, then waits for the harness's word, its end or the limit.
static void hold_for_reader(void) {
    char written = 'w';
    if (send(connection, &written, 1, MSG_NOSIGNAL) != 1) return;
    mh_wait_for_answer(connection, MH_REQUEST_HOLD_LIMIT_NS);
    char answer;
    (void)recv(connection, &answer, 1, MSG_DONTWAIT);
}

// One request: its label and descriptor; false when the connection ended (or a message is not a request).
static bool receive(char label[64], int *fd) {
    char message[64] = {0};
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct iovec part = {.iov_base = message, .iov_len = sizeof(message) - 1};
    struct msghdr header = {.msg_iov = &part, .msg_iovlen = 1, .msg_control = control.buffer,
                            .msg_controllen = sizeof(control.buffer)};
    ssize_t length;
    do {
        length = recvmsg(connection, &header, MSG_CMSG_CLOEXEC);
    } while (length < 0 && errno == EINTR);
    if (length <= 0) return false;
    *fd = -1;
    for (struct cmsghdr *item = CMSG_FIRSTHDR(&header); item != NULL; item = CMSG_NXTHDR(&header, item)) {
        if (item->cmsg_level == SOL_SOCKET && item->cmsg_type == SCM_RIGHTS) memcpy(fd, CMSG_DATA(item), sizeof(int));
    }
    memset(label, 0, 64);
    if (length > 1) memcpy(label, message + 1, (size_t)length - 1);
    return message[0] == 'c';
}

static void *request_main(void *argument) {
    (void)argument;
    atomic_store_explicit(&request_tid, (pid_t)syscall(SYS_gettid), memory_order_relaxed);
    mh_tls.guard = 1;  // whatever libc might allocate here is never the program's
    char label[64];
    int fd;
    while (connection >= 0 && receive(label, &fd)) {
        int code = fd >= 0 ? mh_capture_requested(fd, label, hold_for_reader) : EINVAL;
        if (fd >= 0) close(fd);
        if (code == 0) continue;
        char answer[1 + 256] = {'f'};
        const char *reason = fd >= 0 ? memharness_agent_heap_failure() : "the request passed no descriptor";
        size_t length = strnlen(reason, 256);
        memcpy(answer + 1, reason, length);
        if (send(connection, answer, 1 + length, MSG_NOSIGNAL) < 0) break;
    }
    return NULL;
}

// The thread's id (0: none): a capture stops every thread but it, as it blocks every signal.
pid_t mh_request_tid(void) { return atomic_load_explicit(&request_tid, memory_order_relaxed); }

bool mh_request_init(void) {
    // Read at load, before the program can change its environment.
    if (!mh_read_socket_path("MEMHARNESS_AGENT_CAPTURE_SOCKET", socket_path, sizeof(socket_path))) return true;
    connection = connect_harness();
    if (connection < 0) {
        mh_warn("cannot connect to MEMHARNESS_AGENT_CAPTURE_SOCKET; no captures on request");
        return true;
    }
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 128 << 10);
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_t thread;
    bool started = pthread_create(&thread, &attributes, request_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    pthread_attr_destroy(&attributes);
    if (started) {
        pthread_setname_np(thread, "memharness-cap");
        pthread_detach(thread);
    } else {
        close(connection);
        connection = -1;
        mh_warn("cannot start the capture request thread; no captures on request");
    }
    return true;
}

// The child has no request thread (fork copies only the calling thread): its copy of the connection is closed, so the
// harness's end sees the program's end only.
void mh_request_child(void) {
    if (connection >= 0) close(connection);
    connection = -1;
    atomic_store_explicit(&request_tid, 0, memory_order_relaxed);
}
