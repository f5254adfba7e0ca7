#ifndef CCORDIS_SHIM_H
#define CCORDIS_SHIM_H

// The few Linux socket facilities Swift's Glibc module does not expose (epoll, eventfd, accept4,
// struct ucred, SO_PEERGROUPS) plus small helpers that keep sockaddr handling out of Swift.
// Every function returns -1 and leaves errno set on failure unless documented otherwise.

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>

/// Readiness bits, equal to the epoll ones.
extern const uint32_t CCORDIS_EVENT_READ;
extern const uint32_t CCORDIS_EVENT_WRITE;
extern const uint32_t CCORDIS_EVENT_ERROR;
extern const uint32_t CCORDIS_EVENT_HANGUP;
extern const uint32_t CCORDIS_EVENT_READ_HANGUP;

/// One readiness report: the epoll bits and the token given at registration.
typedef struct {
    uint32_t events;
    uint64_t token;
} ccordis_event;

int ccordis_epoll_create(void);
/// Adds `fd` with `events` and `token`.
int ccordis_epoll_add(int epfd, int fd, uint32_t events, uint64_t token);
/// Changes the interest set of `fd`.
int ccordis_epoll_modify(int epfd, int fd, uint32_t events, uint64_t token);
int ccordis_epoll_remove(int epfd, int fd);
/// Waits up to `timeout_ms` (-1 forever); returns the number of events written, 0 on EINTR.
int ccordis_epoll_wait(int epfd, ccordis_event *events, int capacity, int timeout_ms);

/// A non-blocking, close-on-exec eventfd.
int ccordis_eventfd_create(void);
/// Adds one to the counter (wakes a waiter); EAGAIN is not an error.
int ccordis_eventfd_signal(int fd);
/// Resets the counter.
void ccordis_eventfd_drain(int fd);

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC.
int ccordis_accept(int fd);

/// How many CPUs the calling thread may run on (its affinity mask); 1 when it cannot be read.
int ccordis_allowed_cpus(void);

/// The peer's credentials on a Unix socket (SO_PEERCRED).
int ccordis_peer_credentials(int fd, uint32_t *uid, uint32_t *gid, int32_t *pid);
/// The peer's supplementary groups (SO_PEERGROUPS); returns the count written (at most capacity).
int ccordis_peer_groups(int fd, uint32_t *groups, int capacity);

/// A non-blocking close-on-exec stream socket of `family` (AF_UNIX, AF_INET, AF_INET6).
int ccordis_stream_socket(int family);
int ccordis_set_nonblocking(int fd);
int ccordis_set_int_option(int fd, int level, int name, int value);
/// TCP_NODELAY on.
int ccordis_set_no_delay(int fd);
/// Socket buffer sizes (0 leaves one unchanged).
int ccordis_set_buffer_sizes(int fd, int send_bytes, int receive_bytes);

/// Binds a Unix socket to `path`; ENAMETOOLONG when the path does not fit sockaddr_un.
int ccordis_unix_bind(int fd, const char *path);
/// Connects a Unix socket to `path` (non-blocking sockets report EAGAIN when the backlog is full).
int ccordis_unix_connect(int fd, const char *path);

/// The family of a numeric host: AF_INET, AF_INET6, or 0 when it is not numeric.
int ccordis_numeric_family(const char *host);
/// Binds `fd` (of the host's family) to a numeric host and port; sets SO_REUSEADDR and, for
/// IPv6, IPV6_V6ONLY.
int ccordis_inet_bind(int fd, const char *host, uint16_t port);
/// Starts connecting `fd` to a numeric host and port: 0 connected, 1 in progress, -1 failed.
int ccordis_inet_connect(int fd, const char *host, uint16_t port);
/// Resolves a host name to its first numeric address of a stream-capable family, written into
/// `buffer`; returns 0, or a getaddrinfo error code (positive) / -1.
int ccordis_resolve(const char *host, char *buffer, size_t capacity);

/// Writes the local (peer == 0) or remote (peer != 0) address of `fd` into `buffer` as
/// `unix:/path`, `tcp:HOST:PORT` or `tcp:[HOST]:PORT`; returns the family, or -1.
int ccordis_socket_address(int fd, int peer, char *buffer, size_t capacity);
/// 1 when `fd` is a listening stream socket, 0 when not, -1 on error.
int ccordis_is_listening_stream(int fd);
/// The pending error of a connecting socket (SO_ERROR), or -1.
int ccordis_socket_error(int fd);

/// send() with MSG_NOSIGNAL, so a closed peer gives EPIPE instead of SIGPIPE.
ssize_t ccordis_send(int fd, const void *bytes, size_t count);
/// Half-closes the write side.
int ccordis_shutdown_write(int fd);
/// Ends a socket for every copy of its descriptor, then closes this one: shutdown(SHUT_RDWR) stops
/// a listening socket listening and sends a connected one's end even while another process (a child
/// forked meanwhile, until it execs) still holds a copy, which close() alone leaves open.
int ccordis_close_socket(int fd);

/// Clears O_NONBLOCK (benchmarks and blocking test clients).
int ccordis_set_blocking(int fd);
/// Pins every thread of this process to `cpu`, or lets them run on every CPU when `cpu` < 0.
/// Threads created later inherit the setting of the thread creating them. Returns threads changed.
int ccordis_set_process_affinity(int cpu);

/// getrandom(2) with no flags: up to `count` bytes from the kernel's generator (blocks only until it
/// is first seeded at boot); returns the bytes written, or -1 with errno.
ssize_t ccordis_random(void *bytes, size_t count);
/// Bytes of heap in use in this process (glibc's mallinfo2: allocated chunks plus mmapped blocks),
/// every arena counted; what benchmarks measure memory per object with.
size_t ccordis_heap_in_use(void);
/// Names the calling thread (the kernel keeps 15 bytes); returns 0 or an error number.
int ccordis_name_thread(const char *name);
/// Waits for `thread` to end, for at most `timeout_ms`; returns 0 once joined, else an error number
/// (`ETIMEDOUT` when it still runs).
int ccordis_join_thread(pthread_t thread, int timeout_ms);

int ccordis_shim_version(void);

/// Gives the heap's free memory back to the system (`malloc_trim(0)`); 1 when some was released.
int ccordis_trim_heap(void);

/// Asks the kernel to kill this process (SIGKILL) when its parent ends (PR_SET_PDEATHSIG). Returns 1
/// when process `parent` is already gone (the caller should exit), 0 when set, -1 on failure.
int ccordis_die_with_parent(int32_t parent);

/// A descriptor that polls readable once process `pid` (any process, not only a child) has ended
/// (pidfd_open, Linux 5.3), close-on-exec.
int ccordis_pidfd_open(int32_t pid);

#endif
