/*
 * kmtbench-query: the cost of one query call, natively, on the software
 * adapter: QueryStatistics of each documented type and QueryAdapterInfo
 * of common types, next to a raw getpid system call and a raw ioctl that
 * copies a word out (FIONREAD on a pipe), measured in the same run.  The
 * per-call goal is 1 us.  Each QueryAdapterInfo type has two rows: the
 * answer buffer on the caller's stack, which the library writes with
 * memcpy, and on the heap, which it writes with its fault-guarded copy;
 * neither makes a system call.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/bench_util.h"

static LUID luid;
static D3DKMT_HANDLE adapter;

struct stats_case {
    const char *name;
    D3DKMT_QUERYSTATISTICS_TYPE type;
    const char *what;
};

static const struct stats_case stats_cases[] = {
    { "stats_adapter", D3DKMT_QUERYSTATISTICS_ADAPTER, "QueryStatistics ADAPTER" },
    { "stats_process", D3DKMT_QUERYSTATISTICS_PROCESS, "QueryStatistics PROCESS" },
    { "stats_process_adapter", D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER, "QueryStatistics PROCESS_ADAPTER" },
    { "stats_segment", D3DKMT_QUERYSTATISTICS_SEGMENT, "QueryStatistics SEGMENT 0" },
    { "stats_process_segment", D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT, "QueryStatistics PROCESS_SEGMENT 0" },
    { "stats_node", D3DKMT_QUERYSTATISTICS_NODE, "QueryStatistics NODE 0" },
    { "stats_process_node", D3DKMT_QUERYSTATISTICS_PROCESS_NODE, "QueryStatistics PROCESS_NODE 0" },
    { "stats_vidpnsource", D3DKMT_QUERYSTATISTICS_VIDPNSOURCE, "QueryStatistics VIDPNSOURCE 0" },
    { "stats_process_vidpnsource", D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE,
      "QueryStatistics PROCESS_VIDPNSOURCE 0" },
    /* the Windows 10 1803+ types; a zero query is physical adapter 0,
     * segment, node or local group 0 */
    { "stats_process_segment_group", D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP,
      "QueryStatistics PROCESS_SEGMENT_GROUP local" },
    { "stats_physical_adapter", D3DKMT_QUERYSTATISTICS_PHYSICAL_ADAPTER, "QueryStatistics PHYSICAL_ADAPTER 0" },
    { "stats_adapter2", D3DKMT_QUERYSTATISTICS_ADAPTER2, "QueryStatistics ADAPTER2" },
    { "stats_segment2", D3DKMT_QUERYSTATISTICS_SEGMENT2, "QueryStatistics SEGMENT2 0" },
    { "stats_process_adapter2", D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER2, "QueryStatistics PROCESS_ADAPTER2" },
    { "stats_process_segment2", D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT2, "QueryStatistics PROCESS_SEGMENT2 0" },
    { "stats_process_segment_group2", D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP2,
      "QueryStatistics PROCESS_SEGMENT_GROUP2 local" },
    { "stats_segment_usage", D3DKMT_QUERYSTATISTICS_SEGMENT_USAGE, "QueryStatistics SEGMENT_USAGE 0" },
    { "stats_segment_group_usage", D3DKMT_QUERYSTATISTICS_SEGMENT_GROUP_USAGE,
      "QueryStatistics SEGMENT_GROUP_USAGE local" },
    { "stats_node2", D3DKMT_QUERYSTATISTICS_NODE2, "QueryStatistics NODE2 0" },
    { "stats_process_node2", D3DKMT_QUERYSTATISTICS_PROCESS_NODE2, "QueryStatistics PROCESS_NODE2 0" },
};

static void stats_body(void *arg, unsigned ops)
{
    const struct stats_case *c = arg;
    D3DKMT_QUERYSTATISTICS q;
    NTSTATUS s;

    for (unsigned i = 0; i < ops; i++) {
        q.Type = c->type;
        q.AdapterLuid = luid;
        q.hProcess = NULL;
        q.QuerySegment.SegmentId = 0;
        if ((s = D3DKMTQueryStatistics(&q)))
            bench_die(c->what, s);
    }
}

struct qai_case {
    const char *name, *heap_name;
    KMTQUERYADAPTERINFOTYPE type;
    UINT size;
    const char *what, *heap_what;
    NTSTATUS expected;                   /* what the software adapter answers */
};

/* One type, two rows: the answer buffer on the stack and on the heap. */
#define QAI_CASE(name, type, size, what, ...) \
    { name, name "_heap", type, size, what ", stack buffer", what ", heap buffer", __VA_ARGS__ }

static const struct qai_case qai_cases[] = {
    QAI_CASE("qai_driverversion", KMTQAITYPE_DRIVERVERSION, sizeof(D3DKMT_DRIVERVERSION),
             "QueryAdapterInfo DRIVERVERSION", STATUS_SUCCESS),
    QAI_CASE("qai_segmentsize", KMTQAITYPE_GETSEGMENTSIZE, sizeof(D3DKMT_SEGMENTSIZEINFO),
             "QueryAdapterInfo GETSEGMENTSIZE", STATUS_SUCCESS),
    QAI_CASE("qai_adapteraddress", KMTQAITYPE_ADAPTERADDRESS, sizeof(D3DKMT_ADAPTERADDRESS),
             "QueryAdapterInfo ADAPTERADDRESS (soft: no bus, NOT_SUPPORTED)", STATUS_NOT_SUPPORTED),
    QAI_CASE("qai_wddm_2_7_caps", KMTQAITYPE_WDDM_2_7_CAPS, sizeof(D3DKMT_WDDM_2_7_CAPS),
             "QueryAdapterInfo WDDM_2_7_CAPS", STATUS_SUCCESS),
    QAI_CASE("qai_nodemetadata", KMTQAITYPE_NODEMETADATA, sizeof(D3DKMT_NODEMETADATA),
             "QueryAdapterInfo NODEMETADATA 0", STATUS_SUCCESS),
    QAI_CASE("qai_queryregistry", KMTQAITYPE_QUERYREGISTRY, sizeof(D3DDDI_QUERYREGISTRY_INFO),
             "QueryAdapterInfo QUERYREGISTRY (a value not there)", STATUS_SUCCESS),
};

union qai_buffer {
    D3DKMT_NODEMETADATA meta;
    D3DDDI_QUERYREGISTRY_INFO reg;
    unsigned char bytes[sizeof(D3DDDI_QUERYREGISTRY_INFO)];
};

/* The answer buffer of a row: the caller's stack (memcpy) or the heap
 * (the fault-guarded copy). */
static void qai_loop(const struct qai_case *c, union qai_buffer *buf, unsigned ops)
{
    D3DKMT_QUERYADAPTERINFO q = { adapter, c->type, buf, c->size };
    NTSTATUS s;

    for (unsigned i = 0; i < ops; i++) {
        memset(buf, 0, c->size);
        if (c->type == KMTQAITYPE_QUERYREGISTRY) {
            buf->reg.QueryType = D3DDDI_QUERYREGISTRY_ADAPTERKEY;
            buf->reg.ValueName[0] = 'x';
            buf->reg.ValueType = 1;      /* REG_SZ */
        }
        if ((s = D3DKMTQueryAdapterInfo(&q)) != c->expected)
            bench_die(c->what, s);
    }
}

static void qai_stack_body(void *arg, unsigned ops)
{
    union qai_buffer buf;

    qai_loop(arg, &buf, ops);
}

static void qai_heap_body(void *arg, unsigned ops)
{
    union qai_buffer *buf = malloc(sizeof(*buf));

    if (!buf)
        bench_die("malloc", 0);
    qai_loop(arg, buf, ops);
    free(buf);
}

static void getpid_body(void *arg, unsigned ops)
{
    (void)arg;
    for (unsigned i = 0; i < ops; i++)
        if (syscall(SYS_getpid) <= 0)
            bench_die("getpid", 0);
}

static void ioctl_body(void *arg, unsigned ops)
{
    int fd = *(const int *)arg, n;

    for (unsigned i = 0; i < ops; i++)
        if (ioctl(fd, FIONREAD, &n))
            bench_die("ioctl(FIONREAD)", 0);
}

static void open_adapter(void)
{
    D3DKMT_ADAPTERINFO info[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, info };
    NTSTATUS s;

    setenv("KMTSHIM_MINIPORT", "soft", 1);
    setenv("KMTSHIM_SOFT_SOURCES", "1", 1);       /* for the VidPn source rows */
    if ((s = D3DKMTEnumAdapters2(&e)) || !e.NumAdapters)
        bench_die("D3DKMTEnumAdapters2", s);
    adapter = info[0].hAdapter;
    luid = info[0].AdapterLuid;
}

int main(int argc, char **argv)
{
    struct bench_options o = { false, 5, 1.0 };
    unsigned ops;
    int fds[2];

    bench_parse_options(argc, argv,
                        "Times one QueryStatistics call of each type kmtshim serves and QueryAdapterInfo\n"
                        "of common types on the software adapter (answer buffer on the stack and on the\n"
                        "heap), with a raw getpid system call and a raw ioctl (FIONREAD on a pipe)\n"
                        "measured in the same run.\n", &o);
    ops = bench_scaled(&o, 200000);
    open_adapter();
    for (size_t i = 0; i < sizeof(stats_cases) / sizeof(stats_cases[0]); i++)
        bench_record(stats_cases[i].name, stats_cases[i].what,
                     bench_timed(&o, ops, stats_body, (void *)&stats_cases[i]), 1);
    for (size_t i = 0; i < sizeof(qai_cases) / sizeof(qai_cases[0]); i++) {
        const struct qai_case *c = &qai_cases[i];

        bench_record(c->name, c->what, bench_timed(&o, ops, qai_stack_body, (void *)c), 1);
        bench_record(c->heap_name, c->heap_what, bench_timed(&o, ops, qai_heap_body, (void *)c), 1);
    }
    KmtProcessShutdown();
    if (KmtLiveObjectCount())
        bench_die("leak check", KmtLiveObjectCount());
    bench_record("raw_getpid", "syscall(SYS_getpid)", bench_timed(&o, ops, getpid_body, NULL), 1);
    if (pipe(fds))
        bench_die("pipe", 0);
    bench_record("raw_ioctl", "ioctl(FIONREAD) on a pipe", bench_timed(&o, ops, ioctl_body, &fds[0]), 1);
    close(fds[0]);
    close(fds[1]);
    bench_print(&o);
    return 0;
}
