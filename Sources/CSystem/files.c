// Files with no name, for the harness's heap captures, and a descriptor passed to another process with them.
#define _GNU_SOURCE
#include "memharness_system.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int memharness_open_unnamed_file(const char *directory) {
    int fd = open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
    // No O_TMPFILE on this file system: a name for an instant, unlinked before anything is written.
    char path[4096];
    int length = snprintf(path, sizeof(path), "%s/memharness-unnamed-XXXXXX", directory);
    if (length < 0 || (size_t)length >= sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0) unlink(path);
    return fd;
}

long memharness_send_descriptor(int socket, const void *bytes, unsigned long length, int fd) {
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct iovec part = {.iov_base = (void *)bytes, .iov_len = length};
    struct msghdr header = {.msg_iov = &part, .msg_iovlen = 1, .msg_control = control.buffer,
                            .msg_controllen = sizeof(control.buffer)};
    struct cmsghdr *item = CMSG_FIRSTHDR(&header);
    item->cmsg_level = SOL_SOCKET;
    item->cmsg_type = SCM_RIGHTS;
    item->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(item), &fd, sizeof(int));
    ssize_t sent;
    do {
        sent = sendmsg(socket, &header, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return (long)sent;
}
