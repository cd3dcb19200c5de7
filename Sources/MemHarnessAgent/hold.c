// Holding the process at its exit for the reader of its heap capture (MEMHARNESS_AGENT_HOLD_AT_EXIT=SOCKET; a name
// starting with @ is in Linux's abstract namespace, which leaves no file behind).
//
// A heap capture holds each block's first words, not the Swift metadata they point at; that metadata is made at run
// time (generic types), in memory that ends with the process. So the process that reads the capture names its blocks
// from the process's own memory (/proc/PID/mem), and needs the process alive while it does: at the very end of the
// exit path, once the capture and every file are written, the agent connects to the reader's Unix socket, sends one
// byte and waits until the reader answers, closes the connection (the reader ended) or MH_HOLD_LIMIT_NS passes.
// Without the variable, or without a listener, the process exits at once. Nothing here allocates. The helpers for the
// harness's sockets (a name from the environment, a connection, a wait for the answer) serve request.c too.
#include "agent_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

// Past this the process goes on exiting whatever the reader does: a reader that hangs never keeps it forever.
#define MH_HOLD_LIMIT_NS ((int64_t)600 * 1000000000)

static char hold_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

bool mh_read_socket_path(const char *variable, char *path, size_t capacity) {
    const char *value = getenv(variable);
    if (value == NULL) return false;
    size_t length = strlen(value);
    if (length == 0 || length >= capacity) {
        if (length > 0) mh_warn("a memharness socket's name is longer than a socket path may be; it is not used");
        return false;
    }
    memcpy(path, value, length + 1);
    return true;
}

int mh_connect_socket(const char *path, int type) {
    int socket_fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    if (socket_fd < 0) return -1;
    struct sockaddr_un address;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    size_t length = strlen(path);
    memcpy(address.sun_path, path, length);
    if (path[0] == '@') address.sun_path[0] = 0;  // abstract: the name's bytes, no terminator
    socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length + (path[0] == '@' ? 0 : 1));
    if (connect(socket_fd, (struct sockaddr *)&address, size) != 0) {
        close(socket_fd);
        return -1;
    }
    return socket_fd;
}

// Read at load, before the program can change its environment.
__attribute__((constructor)) static void mh_hold_read_environment(void) {
    mh_read_socket_path("MEMHARNESS_AGENT_HOLD_AT_EXIT", hold_path, sizeof(hold_path));
}

void mh_wait_for_answer(int socket_fd, int64_t limit_ns) {
    int64_t deadline = mh_now_ns() + limit_ns;
    struct pollfd waiting = {.fd = socket_fd, .events = POLLIN};
    for (;;) {
        int64_t left_ms = (deadline - mh_now_ns()) / 1000000;
        if (left_ms <= 0) return;
        int ready = poll(&waiting, 1, left_ms > 60000 ? 60000 : (int)left_ms);
        if (ready > 0) return;  // the answer, or the reader's end
        if (ready < 0 && errno != EINTR) return;
    }
}

void mh_hold_at_exit(int status, const struct mh_stopped *caller) {
    (void)status;
    (void)caller;
    if (hold_path[0] == 0) return;
    int socket_fd = mh_connect_socket(hold_path, SOCK_STREAM);
    if (socket_fd < 0) return;
    char byte = 'x';
    if (send(socket_fd, &byte, 1, MSG_NOSIGNAL) == 1) mh_wait_for_answer(socket_fd, MH_HOLD_LIMIT_NS);
    close(socket_fd);
}
