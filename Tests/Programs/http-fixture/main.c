// http-fixture: a small HTTP/1.1 server for the server scenarios' tests, whose behaviour is known by construction.
//
//   http-fixture PORT [--retain BYTES] [--leak BYTES] [--allocations N] [--crash-after N] [--ready-after-ms N]
//                [--chatter BYTES] [--never-ready] [--ignore-term] [--fork-every N] [--exit-after N]
//
// Listens on 127.0.0.1:PORT, then prints "listening on PORT" (standard output, flushed), then with --chatter BYTES
// of lines of zeros (a ready line long scrolled by). Answers every GET or POST
// (keep-alive, one thread per connection) with 200 and "ok"; with --retain keeps BYTES bytes per request (written,
// in a list nothing frees), so its heap grows by construction; with --leak BYTES allocates and writes BYTES bytes
// per request and forgets their address (one leaked block per request, no root reaches it); with --allocations N
// makes N more allocations per request (64 bytes each, freed at once: each address goes through a volatile, so the
// compiler keeps every malloc and free); with --crash-after N writes through a null pointer
// (SIGSEGV) on its Nth request; with --fork-every N forks on every Nth request a child that allocates, frees and
// lingers 100 ms before it exits (children reaped by the kernel: SIGCHLD ignored); with --exit-after N calls exit(0)
// once its Nth request is answered (a server that ends while the harness may be asking for a heap capture). On SIGTERM or SIGINT prints "served N" (the requests it answered; standard error,
// whose tail a report keeps) and exits 0, unless
// --ignore-term (then only SIGKILL ends it). --never-ready prints "starting" and never listens.
#define _GNU_SOURCE  // accept4
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static atomic_long served;
static long crash_after = -1;
static long retain_bytes;
static long allocations_per_request;
static long leak_bytes;
static long fork_every;
static long exit_after = -1;
/// Where each of --allocations' blocks goes before it is freed: a volatile, so no malloc/free pair can be dropped; one
/// per thread (connections are served by threads of their own: a shared one let a thread free another's block).
static _Thread_local void *volatile allocation_sink;

/// What --retain keeps: a list nothing frees.
struct kept {
    struct kept *next;
};
static struct kept *kept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void retain(void) {
    if (retain_bytes < (long)sizeof(struct kept)) return;
    struct kept *block = malloc((size_t)retain_bytes);
    if (!block) return;
    memset(block, 0xA5, (size_t)retain_bytes);
    pthread_mutex_lock(&kept_lock);
    block->next = kept;
    kept = block;
    pthread_mutex_unlock(&kept_lock);
}

/// --allocations: N blocks allocated, written and freed, one after another.
static void allocate_more(long number) {
    for (long i = 0; i < allocations_per_request; i++) {
        char *block = malloc(64);
        if (!block) return;
        block[0] = (char)number;
        allocation_sink = block;
        free(block);
    }
}

/// --leak: a block written, its address stored through a volatile (the compiler keeps the malloc), then forgotten.
static void leak(void) {
    if (leak_bytes <= 0) return;
    char *block = malloc((size_t)leak_bytes);
    if (!block) return;
    memset(block, 0x5A, (size_t)leak_bytes);
    allocation_sink = block;
    allocation_sink = NULL;
}

/// --fork-every: a child that allocates, writes and frees a block, lingers, and exits without the parent's exit handlers.
static void fork_child(long number) {
    if (fork_every <= 0 || number % fork_every != 0) return;
    pid_t child = fork();
    if (child != 0) return;
    char *block = malloc(4096);
    if (block) {
        block[0] = (char)number;
        allocation_sink = block;
        free(block);
    }
    usleep(100000);
    _exit(0);
}

/// Reads one request's headers and body; 0 at its end, -1 when the connection ended.
static int read_request(int fd) {
    char buffer[16384];
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        if (have == sizeof buffer - 1) return -1;
        ssize_t got = recv(fd, buffer + have, sizeof buffer - 1 - have, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        have += (size_t)got;
        buffer[have] = 0;
        end = strstr(buffer, "\r\n\r\n");
    }
    long long length = 0;
    for (char *line = strstr(buffer, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "content-length:", 15) == 0) length = atoll(line + 17);
    }
    long long body = (long long)(have - (size_t)(end + 4 - buffer));
    while (body < length) {
        ssize_t got = recv(fd, buffer, sizeof buffer, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        body += got;
    }
    return 0;
}

static void *serve(void *argument) {
    int fd = (int)(long)argument;
    static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok";
    while (read_request(fd) == 0) {
        long number = atomic_fetch_add(&served, 1) + 1;
        if (number == crash_after) *(volatile int *)0 = 1;  // SIGSEGV, by construction
        retain();
        allocate_more(number);
        leak();
        fork_child(number);
        if (send(fd, answer, sizeof answer - 1, MSG_NOSIGNAL) < 0) break;
        if (number == exit_after) exit(0);
    }
    close(fd);
    return NULL;
}

static void *accept_loop(void *argument) {
    int listener = (int)(long)argument;
    for (;;) {
        int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) continue;
        pthread_t thread;
        if (pthread_create(&thread, NULL, serve, (void *)(long)fd) != 0) {
            close(fd);
            continue;
        }
        pthread_detach(thread);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: http-fixture PORT [--retain BYTES] [--leak BYTES] [--allocations N] "
                        "[--crash-after N] [--ready-after-ms N] [--chatter BYTES] [--never-ready] [--ignore-term] "
                        "[--fork-every N] [--exit-after N]\n");
        return 64;
    }
    int port = atoi(argv[1]), never_ready = 0, ignore_term = 0;
    long ready_after_ms = 0, chatter = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--retain") == 0 && i + 1 < argc) retain_bytes = atol(argv[++i]);
        else if (strcmp(argv[i], "--leak") == 0 && i + 1 < argc) leak_bytes = atol(argv[++i]);
        else if (strcmp(argv[i], "--allocations") == 0 && i + 1 < argc) allocations_per_request = atol(argv[++i]);
        else if (strcmp(argv[i], "--crash-after") == 0 && i + 1 < argc) crash_after = atol(argv[++i]);
        else if (strcmp(argv[i], "--ready-after-ms") == 0 && i + 1 < argc) ready_after_ms = atol(argv[++i]);
        else if (strcmp(argv[i], "--chatter") == 0 && i + 1 < argc) chatter = atol(argv[++i]);
        else if (strcmp(argv[i], "--fork-every") == 0 && i + 1 < argc) fork_every = atol(argv[++i]);
        else if (strcmp(argv[i], "--exit-after") == 0 && i + 1 < argc) exit_after = atol(argv[++i]);
        else if (strcmp(argv[i], "--never-ready") == 0) never_ready = 1;
        else if (strcmp(argv[i], "--ignore-term") == 0) ignore_term = 1;
        else {
            fprintf(stderr, "http-fixture: unknown argument %s\n", argv[i]);
            return 64;
        }
    }
    if (fork_every > 0) signal(SIGCHLD, SIG_IGN);
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGINT);
    if (ignore_term) {
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
    } else {
        pthread_sigmask(SIG_BLOCK, &stops, NULL);  // every thread started below inherits the mask
    }
    printf("starting on port %d\n", port);
    fflush(stdout);
    if (never_ready) {
        for (;;) pause();
    }
    if (ready_after_ms > 0) usleep((useconds_t)ready_after_ms * 1000);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 128) != 0) {
        fprintf(stderr, "http-fixture: cannot listen on 127.0.0.1:%d: %s\n", port, strerror(errno));
        return 1;
    }
    pthread_t acceptor;
    if (pthread_create(&acceptor, NULL, accept_loop, (void *)(long)listener) != 0) return 1;
    printf("listening on %d\n", port);
    for (long written = 0; written < chatter; written += 80) printf("%079d\n", 0);
    fflush(stdout);
    if (ignore_term) {
        for (;;) pause();
    }
    int received = 0;
    sigwait(&stops, &received);
    fprintf(stderr, "served %ld\n", atomic_load(&served));
    exit(0);
}
