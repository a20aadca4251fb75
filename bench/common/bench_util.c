/* The shared half of the benchmark programs: see bench_util.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kmtshim/kmtshim.h"
#include "bench_util.h"

struct result {
    const char *name;
    const char *what;
    double ns_per_op;                    /* per operation, per thread */
    unsigned threads;
};

static struct result results[64];   /* kmtbench-query has the most rows */
static unsigned nresults;

double bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, unsigned n)
{
    qsort(v, n, sizeof(*v), by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_die(const char *what, long status)
{
    fprintf(stderr, "%s: %s failed (0x%08lx)\n", program_invocation_short_name, what, (unsigned long)status);
    exit(1);
}

unsigned bench_scaled(const struct bench_options *o, unsigned n)
{
    unsigned v = (unsigned)(n * o->scale);
    return v ? v : 1;
}

static void usage(FILE *f, const char *summary, unsigned default_reps)
{
    fprintf(f,
            "usage: %s [--json | --markdown] [--reps N] [--quick]\n%s"
            "  --json      machine-readable output\n"
            "  --markdown  the table as Markdown (what bench/record-results records)\n"
            "  --reps N    timed repetitions per figure (default %u, at most %d); the median is shown\n"
            "  --quick     a tenth of the operations (a smoke run)\n"
            "  --help      this text\n", program_invocation_short_name, summary, default_reps, BENCH_MAX_REPS);
}

void bench_parse_options(int argc, char **argv, const char *summary, struct bench_options *o)
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'j' },
        { "markdown", no_argument, NULL, 'm' },
        { "reps", required_argument, NULL, 'r' },
        { "quick", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    unsigned default_reps = o->reps;
    char *end;
    int c;

    while ((c = getopt_long(argc, argv, "jmr:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': o->json = true; break;
        case 'm': o->markdown = true; break;
        case 'r':
            o->reps = (unsigned)strtoul(optarg, &end, 10);
            if (*end)
                o->reps = 0;
            break;
        case 'q': o->scale = 0.1; break;
        case 'h': usage(stdout, summary, default_reps); exit(0);
        default: usage(stderr, summary, default_reps); exit(2);
        }
    }
    if (optind < argc || !o->reps || o->reps > BENCH_MAX_REPS || (o->json && o->markdown)) {
        usage(stderr, summary, default_reps);
        exit(2);
    }
}

void bench_parse_counts(int argc, char **argv, const char *usage_text, unsigned n, unsigned *const vals[])
{
    for (int i = 1; i < argc; i++) {
        char *end;
        unsigned long v;

        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage_text, stdout);
            exit(0);
        }
        errno = 0;
        v = strtoul(argv[i], &end, 10);
        if ((unsigned)(i - 1) >= n || !*argv[i] || *end || errno || v > 0xffffffffu) {
            fputs(usage_text, stderr);
            exit(2);
        }
        *vals[i - 1] = (unsigned)v;
    }
}

double bench_timed(const struct bench_options *o, unsigned ops, void (*body)(void *arg, unsigned ops), void *arg)
{
    double times[BENCH_MAX_REPS];

    for (unsigned r = 0; r <= o->reps; r++) {
        double t0 = bench_now_ns();
        body(arg, ops);
        if (r)
            times[r - 1] = (bench_now_ns() - t0) / ops;
    }
    return bench_median(times, o->reps);
}

D3DKMT_HANDLE bench_open_soft_device(void)
{
    D3DKMT_ADAPTERINFO info[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, info };
    D3DKMT_CREATEDEVICE cd = { 0 };
    NTSTATUS s;

    setenv("KMTSHIM_MINIPORT", "soft", 1);
    if ((s = D3DKMTEnumAdapters2(&e)) || !e.NumAdapters)
        bench_die("D3DKMTEnumAdapters2", s);
    cd.hAdapter = info[0].hAdapter;
    if ((s = D3DKMTCreateDevice(&cd)))
        bench_die("D3DKMTCreateDevice", s);
    return cd.hDevice;
}

void bench_record(const char *name, const char *what, double ns_per_op, unsigned threads)
{
    if (nresults == sizeof(results) / sizeof(results[0]))
        bench_die("bench_record (table full)", 0);
    results[nresults++] = (struct result){ name, what, ns_per_op, threads };
}

void bench_print(const struct bench_options *o)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);

    if (o->json) {
        printf("{\n  \"program\": \"%s\",\n  \"version\": \"%s\",\n  \"cpus\": %ld,\n  \"repetitions\": %u,\n"
               "  \"results\": [\n", program_invocation_short_name, KmtGetVersion(), cpus, o->reps);
        for (unsigned i = 0; i < nresults; i++)
            printf("    {\"name\": \"%s\", \"threads\": %u, \"ns_per_op\": %.1f, \"ops_per_s\": %.0f, "
                   "\"what\": \"%s\"}%s\n", results[i].name, results[i].threads, results[i].ns_per_op,
                   results[i].threads * 1e9 / results[i].ns_per_op, results[i].what,
                   i + 1 < nresults ? "," : "");
        printf("  ]\n}\n");
        return;
    }
    if (o->markdown) {
        printf("%s (kmtshim %s), %ld CPUs, median of %u repetitions:\n\n", program_invocation_short_name,
               KmtGetVersion(), cpus, o->reps);
        printf("| benchmark | threads | ns/op | ops/s (all) | what |\n|---|---:|---:|---:|---|\n");
        for (unsigned i = 0; i < nresults; i++)
            printf("| %s | %u | %.1f | %.0f | %s |\n", results[i].name, results[i].threads,
                   results[i].ns_per_op, results[i].threads * 1e9 / results[i].ns_per_op, results[i].what);
        return;
    }
    printf("%s (kmtshim %s), %ld CPUs, median of %u repetitions\n\n", program_invocation_short_name,
           KmtGetVersion(), cpus, o->reps);
    printf("%-24s %7s %12s %14s  %s\n", "benchmark", "threads", "ns/op", "ops/s (all)", "what");
    for (unsigned i = 0; i < nresults; i++)
        printf("%-24s %7u %12.1f %14.0f  %s\n", results[i].name, results[i].threads, results[i].ns_per_op,
               results[i].threads * 1e9 / results[i].ns_per_op, results[i].what);
}

void bench_cpu_signal(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = { 0 };
    NTSTATUS status;

    s.hDevice = device;
    s.ObjectCount = 1;
    s.ObjectHandleArray = &fence;
    s.FenceValueArray = &value;
    if ((status = D3DKMTSignalSynchronizationObjectFromCpu(&s)))
        bench_die("D3DKMTSignalSynchronizationObjectFromCpu", status);
}

void bench_cpu_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };
    NTSTATUS status;

    w.hDevice = device;
    w.ObjectCount = 1;
    w.ObjectHandleArray = &fence;
    w.FenceValueArray = &value;
    if ((status = D3DKMTWaitForSynchronizationObjectFromCpu(&w)))
        bench_die("D3DKMTWaitForSynchronizationObjectFromCpu", status);
}

static cpu_set_t *first_cpus(void)
{
    static cpu_set_t allowed;
    static bool saved;

    if (!saved && !sched_getaffinity(0, sizeof(allowed), &allowed))
        saved = true;
    return saved ? &allowed : NULL;
}

int bench_place_cpu(enum bench_placement p, int side)
{
    cpu_set_t *allowed = first_cpus();
    int skip = p == BENCH_TWO_CPUS ? side : 0;

    if (p == BENCH_ANY_CPU)
        return -1;
    if (!allowed || (p == BENCH_TWO_CPUS && CPU_COUNT(allowed) < 2))
        return -2;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, allowed) && !skip--)
            return i;
    return -2;
}

bool bench_pin(int cpu)
{
    cpu_set_t *allowed = first_cpus(), one;

    if (cpu == -1)
        return allowed && !sched_setaffinity(0, sizeof(*allowed), allowed);
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return false;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return !sched_setaffinity(0, sizeof(one), &one);
}

bool bench_place(enum bench_placement p, int side)
{
    return bench_pin(bench_place_cpu(p, side));
}
