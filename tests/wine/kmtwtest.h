/*
 * A small test harness for Windows-side test programs, in the style of
 * Wine's conformance tests: ok(), todo, skip and one summary line per
 * program, so the output reads like Wine's and tools that parse Wine test
 * logs understand it.
 *
 *     static void test_something(void)
 *     {
 *         ok(status == STATUS_SUCCESS, "got %#lx\n", status);
 *         todo_if(known_gap) ok(x == 1, "x %d\n", x);
 *         if (!feature) { skip("no feature\n"); return; }
 *     }
 *     static const struct kmtw_test tests[] = { { "something", test_something } };
 *     int main(int argc, char **argv) { return kmtw_run("prog", tests, ARRAY_SIZE(tests), argc, argv); }
 *
 * Output, line by line (tests/wine/run-wine-tests.sh reads it):
 *     file.c:123: Test failed: <message>           a failing ok()
 *     file.c:123: Test marked todo: <message>      a failing ok() inside todo
 *     file.c:123: Test succeeded inside todo block: <message>   (a failure)
 *     file.c:123: Tests skipped: <message>
 *     kmtw-subtest: <prog>:<name> <executed> <failures> <todo> <skipped>
 *     <prog>: <N> tests executed (<T> marked as todo, <F> failures), <S> skipped.
 * The exit status is 0 when nothing failed, 1 otherwise.  A crash prints
 * the exception and never reaches the summary line.
 */
#ifndef KMTSHIM_KMTWTEST_H
#define KMTSHIM_KMTWTEST_H

#include <stdarg.h>

#ifndef ARRAY_SIZE
# define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

struct kmtw_test {
    const char *name;
    void (*func)(void);
};

/* Runs `tests` (all, or the ones named on the command line) and prints the
 * summary; returns the exit status. */
int kmtw_run(const char *prog, const struct kmtw_test *tests, unsigned count, int argc, char **argv);

/* Where the next check is; set by the macros below. */
void kmtw_at(const char *file, int line);
int kmtw_ok(int condition, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kmtw_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational line ("file.c:123: ..."). */
void kmtw_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* todo nesting: a failing check inside counts as todo, a passing one fails. */
void kmtw_todo_push(int active);
int kmtw_todo_pop(void);

#define ok(...)    (kmtw_at(__FILE__, __LINE__), kmtw_ok(__VA_ARGS__))
#define skip(...)  (kmtw_at(__FILE__, __LINE__), kmtw_skip(__VA_ARGS__))
#define trace(...) (kmtw_at(__FILE__, __LINE__), kmtw_trace(__VA_ARGS__))

/* todo_if(cond) statement-or-block */
#define todo_if(cond) \
    for (kmtw_todo_push(!!(cond)); kmtw_todo_pop(); )
#define todo todo_if(1)

/* Failures so far in this program (lets a test stop early). */
unsigned kmtw_failures(void);

#endif /* KMTSHIM_KMTWTEST_H */
