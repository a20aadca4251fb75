/*
 * What every kmtshim benchmark shares: the clock, medians, the common
 * command line (--json, --markdown, --reps, --quick, --help) and the result
 * table, so all of them report the same way.  --markdown is the form
 * bench/record-results puts into docs/results.md.
 */
#ifndef KMTSHIM_BENCH_UTIL_H
#define KMTSHIM_BENCH_UTIL_H

#include <stdbool.h>

#include "kmtshim/kmtshim.h"

#define BENCH_MAX_REPS 99

struct bench_options {
    bool json;
    unsigned reps;                       /* timed repetitions per figure */
    double scale;                        /* fraction of the default operation counts */
    bool markdown;                       /* the table as Markdown (docs/results.md) */
};

/* CLOCK_MONOTONIC in nanoseconds. */
double bench_now_ns(void);

/* One round of a polling loop: the CPU's pause hint where it has one. */
static inline void bench_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Sorts v[0..n) and returns its median. */
double bench_median(double *v, unsigned n);

/* Prints "<program>: <what> failed (<status>)" and exits 1. */
_Noreturn void bench_die(const char *what, long status);

/* Runs body(arg, ops) once to warm up, then o->reps times; the median
 * time per operation in nanoseconds. */
double bench_timed(const struct bench_options *o, unsigned ops, void (*body)(void *arg, unsigned ops), void *arg);

/* n scaled by --quick, at least 1. */
unsigned bench_scaled(const struct bench_options *o, unsigned n);

/* Parses the common options into *o, whose fields hold the defaults on
 * entry.  `summary` is the paragraph --help prints under the usage line.
 * Exits 0 after --help, 2 on a bad command line. */
void bench_parse_options(int argc, char **argv, const char *summary, struct bench_options *o);

/* Parses up to n unsigned positional arguments into *vals[i] (left as they
 * are when absent); -h/--help prints `usage` and exits 0, anything that is
 * not a number prints it and exits 2. */
void bench_parse_counts(int argc, char **argv, const char *usage, unsigned n, unsigned *const vals[]);

/* Selects the software adapter (KMTSHIM_MINIPORT=soft) and returns a
 * device on it; exits on failure. */
D3DKMT_HANDLE bench_open_soft_device(void);

/* One monitored fence signalled, or waited for (blocking), from the CPU;
 * exits on failure. */
void bench_cpu_signal(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value);
void bench_cpu_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value);

/* Where the two processes of a ping-pong run: where the scheduler puts
 * them, both on one CPU (a wake-up is a context switch), or each on a CPU
 * of its own (a wake-up crosses CPUs).  The placement decides most of a
 * ping-pong's time on a VM, so kmtshim and its raw counterpart are timed
 * in each placement. */
enum bench_placement { BENCH_ANY_CPU, BENCH_ONE_CPU, BENCH_TWO_CPUS };

/* The CPU side 0 (the process that starts the other) or side 1 of
 * placement p runs on, as this process found its CPUs first: -1 for
 * anywhere, -2 when there are fewer CPUs than p needs. */
int bench_place_cpu(enum bench_placement p, int side);

/* Pins the calling process to CPU `cpu`, or frees it again for -1; false
 * for -2 or when the kernel refuses. */
bool bench_pin(int cpu);

/* bench_pin(bench_place_cpu(p, side)). */
bool bench_place(enum bench_placement p, int side);

/* Adds a row to the result table (at most 64). */
void bench_record(const char *name, const char *what, double ns_per_op, unsigned threads);

/* Prints the table, JSON with --json, or a Markdown table with --markdown. */
void bench_print(const struct bench_options *o);

#endif
