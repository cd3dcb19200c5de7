// memharness-load: HTTP/1.1 requests to 127.0.0.1 over keep-alive connections, one thread per connection, for the
// `load` steps of server scenarios. Bounded by a request count and/or a duration, and by a per-request timeout.
// Prints what it did as `name value` lines on standard output (requests, errors, bytes, latency percentiles in ns);
// exits 64 on bad arguments, 0 otherwise (failed requests are counted, not fatal).
//
//   memharness-load --port P [--method GET|POST] [--path /x] [--connections N] [--requests N] [--duration-ms N]
//                   [--body BYTES] [--timeout-ms N]
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int port;
static const char *method = "GET";
static const char *path = "/";
static long connections = 1;
static long long request_limit = -1;  // -1: no count, the duration ends it
static long long duration_ms = -1;    // -1: no duration, the count ends it
static long long body_bytes;
static long long timeout_ms = 10000;

static atomic_llong issued;
static int64_t deadline_ns;
static char *request_head;
static size_t request_head_length;
static char *body;

/// One connection's figures; latencies grow as it answers.
struct worker {
    pthread_t thread;
    long long requests, errors, bytes;
    int64_t *latencies;
    size_t count, capacity;
};

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int connect_local(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct timeval limit = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t sent = send(fd, bytes, length, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) return -1;
        bytes += sent;
        length -= (size_t)sent;
    }
    return 0;
}

/// Reads one answer (headers, then Content-Length bytes of body); its status, or -1 when the connection broke.
/// `received` counts every byte read.
static int read_answer(int fd, long long *received) {
    char buffer[16384];
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        if (have == sizeof buffer - 1) return -1;  // headers beyond 16 KiB: not an answer this client reads
        ssize_t got = recv(fd, buffer + have, sizeof buffer - 1 - have, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        have += (size_t)got;
        buffer[have] = 0;
        end = strstr(buffer, "\r\n\r\n");
    }
    int status = 0;
    if (sscanf(buffer, "HTTP/1.%*d %d", &status) != 1) return -1;
    long long length = 0;
    for (char *line = strstr(buffer, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "content-length:", 15) == 0) length = atoll(line + 17);
    }
    long long body_have = (long long)(have - (size_t)(end + 4 - buffer));
    *received += (long long)have;
    while (body_have < length) {
        ssize_t got = recv(fd, buffer, sizeof buffer, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        body_have += got;
        *received += got;
    }
    return status;
}

/// Whether another request may start now (and claims it when counted).
static int may_send(void) {
    if (deadline_ns > 0 && now_ns() >= deadline_ns) return 0;
    if (request_limit < 0) return 1;
    return atomic_fetch_add(&issued, 1) < request_limit;
}

static void record(struct worker *worker, int64_t latency) {
    if (worker->count == worker->capacity) {
        size_t capacity = worker->capacity ? worker->capacity * 2 : 4096;
        int64_t *grown = realloc(worker->latencies, capacity * sizeof *grown);
        if (!grown) return;
        worker->latencies = grown;
        worker->capacity = capacity;
    }
    worker->latencies[worker->count++] = latency;
}

static void *run_connection(void *argument) {
    struct worker *worker = argument;
    int fd = -1;
    while (may_send()) {
        if (fd < 0 && (fd = connect_local()) < 0) {
            worker->errors++;  // nothing listens (the server ended): this connection stops
            return NULL;
        }
        int64_t start = now_ns();
        int status = -1;
        if (send_all(fd, request_head, request_head_length) == 0 &&
            (body_bytes == 0 || send_all(fd, body, (size_t)body_bytes) == 0)) {
            status = read_answer(fd, &worker->bytes);
        }
        if (status < 0) {
            worker->errors++;
            close(fd);
            fd = -1;
            continue;
        }
        worker->requests++;
        if (status >= 400) worker->errors++;
        record(worker, now_ns() - start);
    }
    if (fd >= 0) close(fd);
    return NULL;
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int usage(const char *problem) {
    fprintf(stderr,
            "memharness-load: %s\nusage: memharness-load --port P [--method GET|POST] [--path /x] "
            "[--connections N] [--requests N] [--duration-ms N] [--body BYTES] [--timeout-ms N]\n",
            problem);
    return 64;
}

static int parse(int argc, char **argv) {
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc) return usage("an option without its value");
        const char *name = argv[i], *value = argv[i + 1];
        if (strcmp(name, "--port") == 0) port = atoi(value);
        else if (strcmp(name, "--method") == 0) method = value;
        else if (strcmp(name, "--path") == 0) path = value;
        else if (strcmp(name, "--connections") == 0) connections = atol(value);
        else if (strcmp(name, "--requests") == 0) request_limit = atoll(value);
        else if (strcmp(name, "--duration-ms") == 0) duration_ms = atoll(value);
        else if (strcmp(name, "--body") == 0) body_bytes = atoll(value);
        else if (strcmp(name, "--timeout-ms") == 0) timeout_ms = atoll(value);
        else return usage("unknown option");
    }
    if (port < 1 || port > 65535) return usage("--port takes 1...65535");
    if (connections < 1 || connections > 1024) return usage("--connections takes 1...1024");
    if (request_limit < 0 && duration_ms < 0) return usage("give --requests or --duration-ms (or both)");
    if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0) return usage("--method takes GET or POST");
    if (body_bytes < 0 || body_bytes > (64LL << 20) || timeout_ms < 1) return usage("--body or --timeout-ms");
    return 0;
}

int main(int argc, char **argv) {
    int problem = parse(argc, argv);
    if (problem) return problem;
    if (body_bytes > 0 && !(body = calloc(1, (size_t)body_bytes))) return 1;
    request_head = malloc(strlen(path) + 256);
    if (!request_head) return 1;
    request_head_length = (size_t)sprintf(request_head,
                                          "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: %lld\r\n"
                                          "Connection: keep-alive\r\n\r\n",
                                          method, path, port, body_bytes);
    if (duration_ms >= 0) deadline_ns = now_ns() + duration_ms * 1000000;
    struct worker *workers = calloc((size_t)connections, sizeof *workers);
    if (!workers) return 1;
    long started = 0;
    for (; started < connections; started++) {
        if (pthread_create(&workers[started].thread, NULL, run_connection, &workers[started]) != 0) break;
    }
    long long requests = 0, errors = 0, bytes = 0;
    size_t total = 0;
    for (long i = 0; i < started; i++) {
        pthread_join(workers[i].thread, NULL);
        requests += workers[i].requests;
        errors += workers[i].errors;
        bytes += workers[i].bytes;
        total += workers[i].count;
    }
    int64_t *all = malloc((total ? total : 1) * sizeof *all);
    size_t at = 0;
    for (long i = 0; i < started && all; i++) {
        memcpy(all + at, workers[i].latencies, workers[i].count * sizeof *all);
        at += workers[i].count;
    }
    if (all && total) qsort(all, total, sizeof *all, compare);
    int64_t p50 = all && total ? all[(total - 1) / 2] : 0;
    int64_t p99 = all && total ? all[(total - 1) * 99 / 100] : 0;
    printf("requests %lld\nerrors %lld\nbytes %lld\nlatency_p50_ns %lld\nlatency_p99_ns %lld\n", requests, errors,
           bytes, (long long)p50, (long long)p99);
    return 0;
}
