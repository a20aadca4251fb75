/*
 * The fuzzer's deterministic driver for `make check` (TAP, one line):
 * every file of the seed corpus, then a fixed number of inputs made by a
 * seeded PRNG, half of them mutations of the corpus.  The same build runs
 * the same inputs in the same order.
 *
 *   fuzz_d3dkmt_<target>            the run (KMT_FUZZ_ITERATIONS, KMT_FUZZ_SEED)
 *   fuzz_d3dkmt_<target> FILE...    replays inputs (a reproducer)
 *   fuzz_d3dkmt_<target> --peer FD  the peer process the run starts (fuzz_peer.c)
 *
 * Each input is written to fuzz-<target>-input.bin before it runs, so a
 * crash, a sanitizer report or a hang (SIGALRM after 60 s) leaves the input
 * behind; the line on stderr says how to replay it.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

#define FUZZ_MAX_INPUT 4096
#define MAX_CORPUS 256

static char input_path[4096], *self;

static struct {
    uint8_t *data[MAX_CORPUS];
    size_t size[MAX_CORPUS];
    unsigned count;
} corpus;

static uint64_t rng;

static uint64_t next(void)
{
    /* xorshift64*: fixed, portable, fast */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

static void say(const char *s)
{
    ssize_t r = write(2, s, strlen(s));
    (void)r;
}

static void reproducer_hint(void)
{
    say("# fuzz: the failing input is ");
    say(input_path);
    say("; replay it with: ");
    say(self);
    say(" ");
    say(input_path);
    say("\n");
}

static void on_fatal(int sig)
{
    if (sig == SIGALRM)
        say("# fuzz: an input ran for more than 60 s (a hang)\n");
    reproducer_hint();
    signal(sig, SIG_DFL);
    raise(sig == SIGALRM ? SIGABRT : sig);
}

/* ASan and UBSan report and exit without a signal: their death callback. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void save_input(const uint8_t *data, size_t size)
{
    int fd = open(input_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

    if (fd >= 0) {
        if (write(fd, data, size) != (ssize_t)size)
            say("# fuzz: cannot save the input\n");
        close(fd);
    }
}

static bool run(const uint8_t *data, size_t size)
{
    bool ok;

    save_input(data, size);
    alarm(60);
    ok = fuzz_run_one(data, size);
    alarm(0);
    if (!ok)
        reproducer_hint();
    return ok;
}

static bool read_file(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = malloc(FUZZ_MAX_INPUT);

    if (!f || !buf) {
        if (f)
            fclose(f);
        free(buf);
        return false;
    }
    *size = fread(buf, 1, FUZZ_MAX_INPUT, f);
    fclose(f);
    *data = buf;
    return true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void load_corpus(const char *dir)
{
    char *names[MAX_CORPUS], path[4096 + 256];
    unsigned n = 0;
    struct dirent *d;
    DIR *dh = opendir(dir);

    if (!dh)
        return;
    while ((d = readdir(dh)) && n < MAX_CORPUS)
        if (d->d_name[0] != '.')
            names[n++] = strdup(d->d_name);
    closedir(dh);
    qsort(names, n, sizeof(names[0]), by_name);
    for (unsigned i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (names[i] && read_file(path, &corpus.data[corpus.count], &corpus.size[corpus.count]))
            corpus.count++;
        free(names[i]);
    }
}

/* One generated input into buf: random bytes, or a corpus file mutated. */
static size_t generate(uint8_t *buf)
{
    size_t size;

    if (!corpus.count || next() % 4 == 0) {
        size = 8 + next() % 512;
        for (size_t i = 0; i < size; i++)
            buf[i] = (uint8_t)next();
        return size;
    }
    unsigned base = next() % corpus.count;
    size = corpus.size[base];
    memcpy(buf, corpus.data[base], size);
    for (unsigned m = 1 + next() % 8; m > 0; m--) {
        size_t at = size ? next() % size : 0, len = 1 + next() % 16;

        switch (next() % 6) {
        case 0: if (size) buf[at] ^= (uint8_t)(1u << (next() % 8)); break;
        case 1: if (size) buf[at] = (uint8_t)next(); break;
        case 2: if (size) buf[at] = (const uint8_t[]){ 0, 0xff, 0x7f, 0x80, 1 }[next() % 5]; break;
        case 3:                         /* insert random bytes */
            if (size + len > FUZZ_MAX_INPUT)
                break;
            memmove(buf + at + len, buf + at, size - at);
            for (size_t i = 0; i < len; i++)
                buf[at + i] = (uint8_t)next();
            size += len;
            break;
        case 4:                         /* delete */
            len = len < size - at ? len : size - at;
            memmove(buf + at, buf + at + len, size - at - len);
            size -= len;
            break;
        default: {                      /* splice in part of another seed */
            unsigned other = next() % corpus.count;
            size_t from = corpus.size[other] ? next() % corpus.size[other] : 0;

            len = len * 4 < corpus.size[other] - from ? len * 4 : corpus.size[other] - from;
            if (at + len <= FUZZ_MAX_INPUT) {
                memcpy(buf + at, corpus.data[other] + from, len);
                size = at + len > size ? at + len : size;
            }
        }
        }
    }
    return size;
}

/* KMT_FUZZ_VERBOSE: what the process holds after each replayed input. */
static void print_usage(const char *name)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6) || !strncmp(line, "VmSize:", 7) || !strncmp(line, "Threads:", 8))
            fprintf(stderr, "fuzz: %s %.3f s %s", name, t.tv_sec + t.tv_nsec / 1e9, line);
    if (f)
        fclose(f);
}

static int replay(int argc, char **argv)
{
    int failed = 0;

    for (int i = 1; i < argc; i++) {
        uint8_t *data;
        size_t size;

        snprintf(input_path, sizeof(input_path), "%s", argv[i]);
        if (!read_file(argv[i], &data, &size)) {
            fprintf(stderr, "fuzz: cannot read %s\n", argv[i]);
            return 2;
        }
        if (!fuzz_run_one(data, size)) {
            fprintf(stderr, "fuzz: %s fails\n", argv[i]);
            failed = 1;
        }
        if (getenv("KMT_FUZZ_VERBOSE"))
            print_usage(argv[i]);
        free(data);
    }
    printf("fuzz: %d input(s) replayed, %s\n", argc - 1, failed ? "FAILED" : "no finding");
    return failed;
}

int main(int argc, char **argv)
{
    const char *srcdir = getenv("KMTSHIM_TEST_SRCDIR"), *env;
    unsigned iterations = 8000, failures = 0;
    uint64_t seed;
    static uint8_t buf[FUZZ_MAX_INPUT];
    struct timespec t0, t1;
    char dir[4096];

    if (argc > 2 && !strcmp(argv[1], "--peer"))
        return fuzz_peer_main(argc, argv);
    fuzz_peer_enabled = true;
    self = argv[0];
    snprintf(input_path, sizeof(input_path), "fuzz-%s-input.bin", fuzz_target.name);
    signal(SIGSEGV, on_fatal);
    signal(SIGBUS, on_fatal);
    signal(SIGABRT, on_fatal);
    signal(SIGALRM, on_fatal);
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(reproducer_hint);
    fuzz_init();
    if (argc > 1)
        return replay(argc, argv);

    seed = (env = getenv("KMT_FUZZ_SEED")) ? strtoull(env, NULL, 0) : 0x6b6d747368696d31ull;
    rng = seed = seed ? seed : 1;
    if ((env = getenv("KMT_FUZZ_ITERATIONS")))
        iterations = (unsigned)strtoul(env, NULL, 0);
    snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus", srcdir ? srcdir : FUZZ_SRCDIR);
    load_corpus(dir);
    printf("1..1\n# seed corpus: %u inputs from %s; then %u generated (seed %#llx)\n", corpus.count, dir,
           iterations, (unsigned long long)rng);
    fflush(stdout);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 0; i < corpus.count && !failures; i++)
        if (!run(corpus.data[i], corpus.size[i])) {
            fprintf(stderr, "# fuzz: seed corpus file %u (sorted order) fails\n", i);
            failures++;
        }
    for (unsigned i = 0; i < iterations && !failures; i++) {
        size_t size = generate(buf);

        if (!run(buf, size)) {
            fprintf(stderr, "# fuzz: generated input %u fails (KMT_FUZZ_SEED=%#llx "
                    "KMT_FUZZ_ITERATIONS=%u reaches it)\n", i, (unsigned long long)seed, i + 1);
            failures++;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!failures)
        unlink(input_path);
    printf("%s 1 - %s: %u seed + %u generated inputs, %.1f s\n", failures ? "not ok" : "ok",
           fuzz_target.name, corpus.count, iterations,
           (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}
