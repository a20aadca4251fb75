/*
 * kmtbench-share: opening a shared resource in a second process, natively
 * on the software adapter: OpenResource by global handle plus
 * DestroyAllocation of the opened resource, timed in a child process
 * while its creator lives, next to what the same work costs raw in the
 * same run: an SCM_RIGHTS round trip of the memfd between two processes
 * plus the mmap and munmap of it the soft miniport's CPU access needs.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/bench_util.h"
#include "kmtshim/kmtsoft.h"

#define SHARE_SIZE 0x10000u

struct open_args {
    D3DKMT_HANDLE device, global;
};

static void open_body(void *arg, unsigned ops)
{
    const struct open_args *a = arg;
    unsigned char runtime[4], total[0x100], data[0x100];
    NTSTATUS s;

    for (unsigned i = 0; i < ops; i++) {
        D3DDDI_OPENALLOCATIONINFO info = { 0, data, sizeof(data) };
        D3DKMT_OPENRESOURCE o = { 0 };
        D3DKMT_DESTROYALLOCATION d = { 0 };

        o.hDevice = a->device;
        o.hGlobalShare = a->global;
        o.NumAllocations = 1;
        o.pOpenAllocationInfo = &info;
        o.pPrivateRuntimeData = runtime;
        o.PrivateRuntimeDataSize = sizeof(runtime);
        o.pTotalPrivateDriverDataBuffer = total;
        o.TotalPrivateDriverDataBufferSize = sizeof(total);
        if ((s = D3DKMTOpenResource(&o)))
            bench_die("D3DKMTOpenResource", s);
        d.hDevice = a->device;
        d.hResource = o.hResource;
        if ((s = D3DKMTDestroyAllocation(&d)))
            bench_die("D3DKMTDestroyAllocation", s);
    }
}

static D3DKMT_HANDLE create_shared(D3DKMT_HANDLE device)
{
    KMT_SOFT_ALLOCATION_DESC desc = { .Magic = KMT_SOFT_ALLOCATION_MAGIC, .Version = KMT_SOFT_ALLOCATION_VERSION,
                                      .Size = SHARE_SIZE };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    UINT runtime = 0x12345678;
    NTSTATUS s;

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    ca.pPrivateRuntimeData = &runtime;
    ca.PrivateRuntimeDataSize = sizeof(runtime);
    ca.Flags.CreateResource = 1;
    ca.Flags.CreateShared = 1;
    if ((s = D3DKMTCreateAllocation(&ca)))
        bench_die("D3DKMTCreateAllocation(CreateShared)", s);
    return ca.hGlobalShare;
}

/* The opener: a second process, with its own device; its figure comes
 * back through the pipe. */
static double time_open_in_child(const struct bench_options *o, unsigned ops, D3DKMT_HANDLE global)
{
    double ns = 0;
    int p[2], status;
    pid_t pid;

    if (pipe(p) || (pid = fork()) < 0)
        bench_die("fork", 0);
    if (!pid) {
        struct open_args a = { bench_open_soft_device(), global };

        ns = bench_timed(o, ops, open_body, &a);
        _exit(write(p[1], &ns, sizeof(ns)) == sizeof(ns) ? 0 : 1);
    }
    close(p[1]);
    if (read(p[0], &ns, sizeof(ns)) != sizeof(ns) || waitpid(pid, &status, 0) != pid || status)
        bench_die("the opening process", status);
    close(p[0]);
    return ns;
}

static void send_fd(int sock, int fd)
{
    char byte = 0, control[CMSG_SPACE(sizeof(int))] = { 0 };
    struct iovec iov = { &byte, 1 };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                          .msg_controllen = sizeof(control) };
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);

    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &fd, sizeof(fd));
    if (sendmsg(sock, &msg, 0) != 1)
        bench_die("sendmsg", 0);
}

static int receive_fd(int sock)
{
    char byte, control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { &byte, 1 };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                          .msg_controllen = sizeof(control) };
    struct cmsghdr *cmsg;
    int fd;

    if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1 || !(cmsg = CMSG_FIRSTHDR(&msg)))
        return -1;
    memcpy(&fd, CMSG_DATA(cmsg), sizeof(fd));
    return fd;
}

struct raw_args {
    int sock, memfd;
};

/* One round trip of the memfd to the other process and back, and the
 * mapping the opener makes of it. */
static void raw_body(void *arg, unsigned ops)
{
    const struct raw_args *a = arg;

    for (unsigned i = 0; i < ops; i++) {
        void *p;
        int fd;

        send_fd(a->sock, a->memfd);
        if ((fd = receive_fd(a->sock)) < 0)
            bench_die("recvmsg", 0);
        if ((p = mmap(NULL, SHARE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
            bench_die("mmap", 0);
        munmap(p, SHARE_SIZE);
        close(fd);
    }
}

static double time_raw(const struct bench_options *o, unsigned ops)
{
    struct raw_args a;
    int sv[2], status;
    double ns;
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || (a.memfd = memfd_create("bench", MFD_CLOEXEC)) < 0 ||
        ftruncate(a.memfd, SHARE_SIZE) || (pid = fork()) < 0)
        bench_die("raw setup", 0);
    if (!pid) {
        int fd;

        close(sv[0]);
        while ((fd = receive_fd(sv[1])) >= 0) {   /* echoes every fd back */
            send_fd(sv[1], fd);
            close(fd);
        }
        _exit(0);
    }
    close(sv[1]);
    a.sock = sv[0];
    ns = bench_timed(o, ops, raw_body, &a);
    close(sv[0]);
    close(a.memfd);
    if (waitpid(pid, &status, 0) != pid || status)
        bench_die("the echoing process", status);
    return ns;
}

int main(int argc, char **argv)
{
    struct bench_options o = { false, 5, 1.0 };
    D3DKMT_HANDLE device, global;
    char dir[] = "/tmp/kmtbench-share.XXXXXX";
    unsigned ops;

    bench_parse_options(argc, argv,
                        "Times OpenResource by global handle plus DestroyAllocation of the opened resource\n"
                        "in a second process on the software adapter, next to the raw work it stands for:\n"
                        "an SCM_RIGHTS round trip of a memfd between two processes plus its mmap/munmap.\n",
                        &o);
    ops = bench_scaled(&o, 5000);
    /* a session broker of the benchmark's own */
    if (!getenv("KMTSHIM_BROKER_DIR")) {
        if (!mkdtemp(dir))
            bench_die("mkdtemp", 0);
        setenv("KMTSHIM_BROKER_DIR", dir, 1);
    }
    device = bench_open_soft_device();
    global = create_shared(device);
    bench_record("open_resource_other_process", "OpenResource + DestroyAllocation, 2nd process",
                 time_open_in_child(&o, ops, global), 1);
    bench_record("raw_scm_rights_mmap", "SCM_RIGHTS round trip + mmap/munmap of the memfd", time_raw(&o, ops), 1);
    KmtProcessShutdown();
    bench_print(&o);
    if (dir[sizeof(dir) - 2] != 'X')
        rmdir(dir);
    return 0;
}
