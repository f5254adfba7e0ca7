#include "CCordisShim.h"

#include <arpa/inet.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/prctl.h>
#include <signal.h>
#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

const uint32_t CCORDIS_EVENT_READ = EPOLLIN;
const uint32_t CCORDIS_EVENT_WRITE = EPOLLOUT;
const uint32_t CCORDIS_EVENT_ERROR = EPOLLERR;
const uint32_t CCORDIS_EVENT_HANGUP = EPOLLHUP;
const uint32_t CCORDIS_EVENT_READ_HANGUP = EPOLLRDHUP;

int ccordis_shim_version(void) { return 2; }

int ccordis_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static int epoll_apply(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &event);
}

int ccordis_epoll_add(int epfd, int fd, uint32_t events, uint64_t token) {
    return epoll_apply(epfd, EPOLL_CTL_ADD, fd, events, token);
}

int ccordis_epoll_modify(int epfd, int fd, uint32_t events, uint64_t token) {
    return epoll_apply(epfd, EPOLL_CTL_MOD, fd, events, token);
}

int ccordis_epoll_remove(int epfd, int fd) {
    struct epoll_event unused;
    memset(&unused, 0, sizeof unused);
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &unused);
}

int ccordis_epoll_wait(int epfd, ccordis_event *events, int capacity, int timeout_ms) {
    struct epoll_event raw[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epfd, raw, capacity, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int index = 0; index < count; index++) {
        events[index].events = raw[index].events;
        events[index].token = raw[index].data.u64;
    }
    return count;
}

int ccordis_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int ccordis_eventfd_signal(int fd) {
    uint64_t one = 1;
    if (write(fd, &one, sizeof one) < 0 && errno != EAGAIN) return -1;
    return 0;
}

void ccordis_eventfd_drain(int fd) {
    uint64_t value;
    while (read(fd, &value, sizeof value) > 0) {}
}

int ccordis_accept(int fd) { return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

int ccordis_allowed_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int count = CPU_COUNT(&set);
    return count > 0 ? count : 1;
}

int ccordis_peer_credentials(int fd, uint32_t *uid, uint32_t *gid, int32_t *pid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) < 0) return -1;
    *uid = credentials.uid;
    *gid = credentials.gid;
    *pid = credentials.pid;
    return 0;
}

int ccordis_peer_groups(int fd, uint32_t *groups, int capacity) {
#ifdef SO_PEERGROUPS
    if (capacity <= 0) return 0;
    gid_t buffer[256];
    socklen_t length = sizeof buffer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, buffer, &length) < 0) return -1;
    int count = (int)(length / sizeof(gid_t));
    if (count > capacity) count = capacity;
    for (int index = 0; index < count; index++) groups[index] = buffer[index];
    return count;
#else
    (void)fd; (void)groups; (void)capacity;
    errno = ENOPROTOOPT;
    return -1;
#endif
}

int ccordis_stream_socket(int family) {
    return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

int ccordis_set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0) return -1;
    if (fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return -1;
    int descriptor_flags = fcntl(fd, F_GETFD, 0);
    if (descriptor_flags >= 0) (void)fcntl(fd, F_SETFD, descriptor_flags | FD_CLOEXEC);
    return 0;
}

int ccordis_set_int_option(int fd, int level, int name, int value) {
    return setsockopt(fd, level, name, &value, sizeof value);
}

int ccordis_set_no_delay(int fd) { return ccordis_set_int_option(fd, IPPROTO_TCP, TCP_NODELAY, 1); }

int ccordis_set_buffer_sizes(int fd, int send_bytes, int receive_bytes) {
    if (send_bytes > 0 && ccordis_set_int_option(fd, SOL_SOCKET, SO_SNDBUF, send_bytes) < 0) return -1;
    if (receive_bytes > 0 && ccordis_set_int_option(fd, SOL_SOCKET, SO_RCVBUF, receive_bytes) < 0) return -1;
    return 0;
}

static int unix_address(const char *path, struct sockaddr_un *address) {
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    size_t length = strlen(path);
    if (length == 0 || length >= sizeof address->sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(address->sun_path, path, length);
    return 0;
}

int ccordis_unix_bind(int fd, const char *path) {
    struct sockaddr_un address;
    if (unix_address(path, &address) < 0) return -1;
    return bind(fd, (struct sockaddr *)&address, sizeof address);
}

int ccordis_unix_connect(int fd, const char *path) {
    struct sockaddr_un address;
    if (unix_address(path, &address) < 0) return -1;
    return connect(fd, (struct sockaddr *)&address, sizeof address);
}

int ccordis_numeric_family(const char *host) {
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, host, &v4) == 1) return AF_INET;
    if (inet_pton(AF_INET6, host, &v6) == 1) return AF_INET6;
    return 0;
}

static socklen_t inet_address(const char *host, uint16_t port, struct sockaddr_storage *storage) {
    memset(storage, 0, sizeof *storage);
    struct sockaddr_in *v4 = (struct sockaddr_in *)storage;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)storage;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        return sizeof *v4;
    }
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        return sizeof *v6;
    }
    errno = EINVAL;
    return 0;
}

int ccordis_inet_bind(int fd, const char *host, uint16_t port) {
    struct sockaddr_storage storage;
    socklen_t length = inet_address(host, port, &storage);
    if (length == 0) return -1;
    (void)ccordis_set_int_option(fd, SOL_SOCKET, SO_REUSEADDR, 1);
    if (storage.ss_family == AF_INET6) (void)ccordis_set_int_option(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    return bind(fd, (struct sockaddr *)&storage, length);
}

int ccordis_inet_connect(int fd, const char *host, uint16_t port) {
    struct sockaddr_storage storage;
    socklen_t length = inet_address(host, port, &storage);
    if (length == 0) return -1;
    if (connect(fd, (struct sockaddr *)&storage, length) == 0) return 0;
    return errno == EINPROGRESS ? 1 : -1;
}

int ccordis_resolve(const char *host, char *buffer, size_t capacity) {
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo *results = NULL;
    int status = getaddrinfo(host, NULL, &hints, &results);
    if (status != 0) return status;
    int written = -1;
    for (struct addrinfo *entry = results; entry != NULL && written < 0; entry = entry->ai_next) {
        if (entry->ai_family == AF_INET) {
            struct sockaddr_in *v4 = (struct sockaddr_in *)entry->ai_addr;
            if (inet_ntop(AF_INET, &v4->sin_addr, buffer, (socklen_t)capacity) != NULL) written = 0;
        } else if (entry->ai_family == AF_INET6) {
            struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)entry->ai_addr;
            if (inet_ntop(AF_INET6, &v6->sin6_addr, buffer, (socklen_t)capacity) != NULL) written = 0;
        }
    }
    freeaddrinfo(results);
    if (written < 0) return EAI_NONAME;
    return 0;
}

int ccordis_socket_address(int fd, int peer, char *buffer, size_t capacity) {
    struct sockaddr_storage storage;
    socklen_t length = sizeof storage;
    memset(&storage, 0, sizeof storage);
    int status = peer ? getpeername(fd, (struct sockaddr *)&storage, &length)
                      : getsockname(fd, (struct sockaddr *)&storage, &length);
    if (status < 0) return -1;
    char host[INET6_ADDRSTRLEN];
    switch (storage.ss_family) {
    case AF_UNIX: {
        struct sockaddr_un *unix_storage = (struct sockaddr_un *)&storage;
        size_t offset = offsetof(struct sockaddr_un, sun_path);
        size_t path_length = length > offset ? length - offset : 0;
        if (path_length > sizeof unix_storage->sun_path) path_length = sizeof unix_storage->sun_path;
        // Abstract or unnamed sockets have no path.
        char path[sizeof unix_storage->sun_path + 1];
        memcpy(path, unix_storage->sun_path, path_length);
        path[path_length] = 0;
        snprintf(buffer, capacity, "unix:%s", path);
        return AF_UNIX;
    }
    case AF_INET: {
        struct sockaddr_in *v4 = (struct sockaddr_in *)&storage;
        if (inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host) == NULL) return -1;
        snprintf(buffer, capacity, "tcp:%s:%u", host, (unsigned)ntohs(v4->sin_port));
        return AF_INET;
    }
    case AF_INET6: {
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&storage;
        if (inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host) == NULL) return -1;
        snprintf(buffer, capacity, "tcp:[%s]:%u", host, (unsigned)ntohs(v6->sin6_port));
        return AF_INET6;
    }
    default:
        errno = EAFNOSUPPORT;
        return -1;
    }
}

int ccordis_is_listening_stream(int fd) {
    int type = 0, listening = 0;
    socklen_t length = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) < 0) return -1;
    length = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) < 0) return -1;
    return type == SOCK_STREAM && listening ? 1 : 0;
}

int ccordis_socket_error(int fd) {
    int error = 0;
    socklen_t length = sizeof error;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) < 0) return -1;
    return error;
}

ssize_t ccordis_send(int fd, const void *bytes, size_t count) {
    return send(fd, bytes, count, MSG_NOSIGNAL);
}

int ccordis_shutdown_write(int fd) { return shutdown(fd, SHUT_WR); }
int ccordis_close_socket(int fd) {
    (void)shutdown(fd, SHUT_RDWR);
    return close(fd);
}

int ccordis_set_blocking(int fd) {
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

int ccordis_set_process_affinity(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu >= 0) {
        CPU_SET(cpu, &set);
    } else {
        long count = sysconf(_SC_NPROCESSORS_CONF);
        for (long index = 0; index < count && index < CPU_SETSIZE; index++) CPU_SET((int)index, &set);
    }
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL) return -1;
    int changed = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        pid_t tid = (pid_t)atoi(entry->d_name);
        if (tid > 0 && sched_setaffinity(tid, sizeof set, &set) == 0) changed++;
    }
    closedir(tasks);
    return changed;
}

int ccordis_name_thread(const char *name) {
    char cut[16];
    strncpy(cut, name, sizeof cut - 1);
    cut[sizeof cut - 1] = 0;
    return pthread_setname_np(pthread_self(), cut);
}

int ccordis_join_thread(pthread_t thread, int timeout_ms) {
    // The monotonic clock: a wall clock set back meanwhile cannot stretch the wait.
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000L;
    }
    return pthread_clockjoin_np(thread, NULL, CLOCK_MONOTONIC, &deadline);
}

ssize_t ccordis_random(void *bytes, size_t count) {
    return getrandom(bytes, count, 0);
}

size_t ccordis_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

int ccordis_trim_heap(void) { return malloc_trim(0); }

int ccordis_die_with_parent(int32_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    // The parent may have died before the line above: then nothing will ever signal this process.
    if (getppid() != parent && kill(parent, 0) == -1 && errno == ESRCH) return 1;
    return 0;
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int ccordis_pidfd_open(int32_t pid) {
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
}
