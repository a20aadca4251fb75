/*
 * kmtshim-broker: the session broker's main loop (broker.h; design in
 * docs/architecture.md, "Sharing across processes").
 *
 *   kmtshim-broker --dir DIR [--foreground]
 *
 * Started by the library when nothing listens on DIR/socket: it binds
 * and listens, then detaches (its first process exits, which tells the
 * starter the socket is ready), and serves until it has had no client and
 * no live NT handle for KMTSHIM_BROKER_LINGER_MS (default 1000).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "broker/dir.h"
#include "daemon.h"

#define DEFAULT_LINGER_MS 1000

static const char *dir;
static char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int listener = -1;

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: kmtshim-broker --dir DIR [--foreground]\n"
               "kmtshim's session broker; libkmtshim starts it on demand (docs/architecture.md).\n"
               "  --dir DIR      the broker directory (0700, this user's): DIR/socket, DIR/lock,\n"
               "                 DIR/globals\n"
               "  --foreground   do not detach\n");
}

/* The program that started us may have left fds open without O_CLOEXEC
 * (NT handles among them: keeping one would keep its share alive). */
static void close_inherited_fds(void)
{
#ifdef SYS_close_range
    if (!syscall(SYS_close_range, 3, ~0u, 0))
        return;
#endif
    for (int fd = 3; fd < 65536; fd++)
        close(fd);
}

/* The socket this broker bound, so that it never unlinks another's. */
static dev_t socket_dev;
static ino_t socket_ino;

static void unlink_own_socket(void)
{
    struct stat st;

    if (!lstat(socket_path, &st) && st.st_dev == socket_dev && st.st_ino == socket_ino)
        unlink(socket_path);
}

/* Some broker answers on the socket path. */
static bool path_answers(void)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool answers;

    if (sock < 0)
        return false;
    strcpy(addr.sun_path, socket_path);
    answers = !connect(sock, (struct sockaddr *)&addr, sizeof(addr));
    close(sock);
    return answers;
}

/* The listening socket; -1 on failure, -2 when a broker already answers
 * on the path (started without the start lock, or by another tool). */
static int listen_on(void)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    struct stat st;
    int sock;

    if (path_answers())
        return -2;
    if ((sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
        return -1;
    strcpy(addr.sun_path, socket_path);
    /* a dead broker's socket: nothing answered on it */
    unlink(socket_path);
    if (bind(sock, (struct sockaddr *)&addr, sizeof(addr)) || listen(sock, 128)
        || lstat(socket_path, &st)) {
        BROKER_ERR("cannot listen on %s: %s\n", socket_path, strerror(errno));
        close(sock);
        return -1;
    }
    socket_dev = st.st_dev;
    socket_ino = st.st_ino;
    return sock;
}

/* An fd kept for the moment the broker runs out: closing it makes room to
 * accept a waiting client and tell it why it is refused, instead of
 * leaving it in the backlog, where poll() would report it again at once
 * and the loop would spin. */
static int reserve_fd = -1;
static bool out_of_fds_logged;

static void take_reserve(void)
{
    if (reserve_fd < 0)
        reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* Accepts one waiting client with the reserve fd and refuses it: a HELLO
 * reply with STATUS_INSUFFICIENT_RESOURCES, then a hang-up.  1: one was
 * refused; 0: none waits (accept says EMFILE before it looks); -1: there
 * is no reserve (it could not be taken back). */
static int refuse_one(void)
{
    struct kmt_broker_head head = { KMT_BROKER_OP_HELLO, (uint32_t)STATUS_INSUFFICIENT_RESOURCES, 0, 0 };
    int sock;

    if (reserve_fd < 0)
        return -1;
    close(reserve_fd);
    reserve_fd = -1;
    if ((sock = accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
        if (send(sock, &head, sizeof(head), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
            /* the client sees the hang-up alone */
        }
        close(sock);
    }
    take_reserve();
    return sock >= 0;
}

/* false: a client waits that cannot be accepted now (no fd, no reserve);
 * the caller stops polling the listener for a while. */
static bool accept_clients(void)
{
    for (;;) {
        struct ucred cred;
        socklen_t len = sizeof(cred);
        struct client *c;
        int sock = accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (sock < 0) {
            if (errno != EMFILE && errno != ENFILE)
                return true;
            if (!out_of_fds_logged)
                BROKER_ERR("out of file descriptors (%s): refusing new clients\n", strerror(errno));
            out_of_fds_logged = true;
            switch (refuse_one()) {
            case 1: continue;
            case 0: return true;
            default: return false;
            }
        }
        out_of_fds_logged = false;
        take_reserve();
        /* the directory's mode keeps other users out; this keeps them
         * out when it was opened up */
        if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.uid != getuid()) {
            BROKER_ERR("refusing a client of uid %d (pid %d)\n", (int)cred.uid, (int)cred.pid);
            close(sock);
            continue;
        }
        if (!(c = client_new(sock)))
            close(sock);
    }
}

/* Exits unless a client connected meanwhile: under the start lock, so a
 * starter never sees the socket of a broker that is going away.  Returns
 * when a client came, or when a starter holds the lock (its client is
 * about to connect, or it gives up and the exit is tried again). */
static void try_exit(void)
{
    char lock_path[sizeof(socket_path)];
    int lock = -1;

    if (!kmt_broker_dir_file(dir, KMT_BROKER_LOCK_NAME, lock_path, sizeof(lock_path)))
        lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB)) {
        close(lock);
        return;
    }
    accept_clients();
    if (broker.clients) {
        if (lock >= 0)
            close(lock);
        return;
    }
    unlink_own_socket();
    _exit(0);
}

static void serve(unsigned linger_ms)
{
    struct pollfd *fds = NULL;
    struct client **owners = NULL;
    size_t cap = 0;
    uint64_t idle_since = now_ms(), listener_paused_until = 0;

    for (;;) {
        size_t n = 1, clients;
        bool listening = now_ms() >= listener_paused_until;
        int timeout = -1, r;
        bool was_busy;

        for (struct client *c = broker.clients; c; c = c->next)
            n++;
        clients = n;
        for (struct share *s = broker.shares; s; s = s->next)
            for (struct nt_handle *h = s->handles; h; h = h->next)
                n++;
        if (n > cap) {
            cap = n * 2;
            fds = realloc(fds, cap * sizeof(*fds));
            owners = realloc(owners, cap * sizeof(*owners));
            if (!fds || !owners) {
                BROKER_ERR("out of memory\n");
                _exit(1);
            }
        }
        n = 0;
        fds[n++] = (struct pollfd){ listening ? listener : -1, POLLIN, 0 };
        for (struct client *c = broker.clients; c; c = c->next) {
            owners[n] = c;
            fds[n++] = (struct pollfd){ c->sock, c->out_len ? POLLOUT : POLLIN, 0 };
        }
        for (struct share *s = broker.shares; s; s = s->next)
            for (struct nt_handle *h = s->handles; h; h = h->next)
                fds[n++] = (struct pollfd){ h->end, 0, 0 };   /* hang-ups only */

        if (!broker.clients && !broker.shares) {
            uint64_t now = now_ms();

            if (now >= idle_since + linger_ms) {
                try_exit();
                if (!broker.clients)     /* the lock was busy: again in 10 ms */
                    idle_since = now - linger_ms + 10;
                continue;
            }
            timeout = (int)(idle_since + linger_ms - now);
        }
        if (!listening)
            timeout = timeout < 0 || timeout > 100 ? 100 : timeout;
        was_busy = broker.clients || broker.shares;
        r = poll(fds, n, timeout);
        if (r < 0 && errno != EINTR) {
            BROKER_ERR("poll: %s\n", strerror(errno));
            _exit(1);
        }
        if (r <= 0)
            continue;
        for (size_t i = 1; i < clients; i++) {
            struct client *c = owners[i];
            bool ok = true;

            if (!fds[i].revents)
                continue;
            if (fds[i].revents & POLLIN)
                ok = conn_read(c);
            else if (fds[i].revents & POLLOUT)
                ok = conn_write(c);
            else
                ok = false;              /* hang-up or error with nothing to read */
            if (ok && c->out_len)
                ok = conn_write(c);
            if (!ok)
                client_free(c);
        }
        for (size_t i = clients; i < n; i++)
            if (fds[i].revents) {
                nt_reap_hangups();
                break;
            }
        /* no fd and no reserve: look again in 100 ms, serving the others */
        if ((fds[0].revents & POLLIN) && !accept_clients())
            listener_paused_until = now_ms() + 100;
        /* the linger counts from when the last one went */
        if (was_busy || broker.clients || broker.shares)
            idle_since = now_ms();
    }
}

int main(int argc, char **argv)
{
    bool foreground = false;
    const char *env = getenv("KMTSHIM_BROKER_LINGER_MS");
    unsigned linger_ms = DEFAULT_LINGER_MS;
    char why[512];

    close_inherited_fds();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--foreground"))
            foreground = true;
        else if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "kmtshim-broker: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);

        if (!*end && v >= 0 && v <= INT_MAX)
            linger_ms = (unsigned)v;
    }
    /* the session's shared objects are fds: take every one we may have */
    {
        struct rlimit limit;

        if (!getrlimit(RLIMIT_NOFILE, &limit) && limit.rlim_cur < limit.rlim_max) {
            limit.rlim_cur = limit.rlim_max;
            setrlimit(RLIMIT_NOFILE, &limit);
        }
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    if (*dir != '/') {
        BROKER_ERR("%s: the directory must be an absolute path\n", dir);
        return 1;
    }
    if (kmt_broker_dir_prepare(dir, why, sizeof(why))) {
        BROKER_ERR("%s\n", why);
        return 1;
    }
    if (kmt_broker_dir_file(dir, KMT_BROKER_SOCKET_NAME, socket_path, sizeof(socket_path))) {
        BROKER_ERR("directory path too long: %s\n", dir);
        return 1;
    }
    if ((listener = listen_on()) == -2)
        return 0;                        /* the starter connects to that one */
    if (listener < 0)
        return 1;
    if (!foreground) {
        /* the starter waits for this process: its exit says "listening" */
        pid_t pid = fork();

        if (pid < 0) {
            BROKER_ERR("fork: %s\n", strerror(errno));
            unlink_own_socket();
            return 1;
        }
        if (pid)
            _exit(0);
    }
    if (chdir("/")) {
        /* nothing depends on the working directory */
    }
    books_init();
    globals_init(dir);
    take_reserve();
    serve(linger_ms);
    return 0;
}
