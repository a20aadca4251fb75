/*
 * The Windows-side test harness (see kmtwtest.h).
 */
#include <stdio.h>
#include <string.h>

#include <windows.h>

#include "kmtwtest.h"

#define TODO_DEPTH 8

static struct {
    const char *file;
    int line;
    const char *prog;
    const char *subtest;
    /* per program */
    unsigned executed, failures, todos, skipped;
    /* todo stack: active flag and whether the body already ran */
    unsigned todo_depth;
    unsigned char todo_active[TODO_DEPTH], todo_entered[TODO_DEPTH];
} state;

static const char *base_name(const char *path)
{
    const char *p = strrchr(path, '/'), *q = strrchr(path, '\\');

    if (q > p)
        p = q;
    return p ? p + 1 : path;
}

static BOOL in_todo(void)
{
    for (unsigned i = 0; i < state.todo_depth; i++)
        if (state.todo_active[i])
            return TRUE;
    return FALSE;
}

static void vreport(const char *what, const char *fmt, va_list ap)
{
    printf("%s:%d: %s", base_name(state.file), state.line, what);
    vprintf(fmt, ap);
}

void kmtw_at(const char *file, int line)
{
    state.file = file;
    state.line = line;
}

int kmtw_ok(int condition, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    state.executed++;
    if (in_todo()) {
        if (condition) {
            vreport("Test succeeded inside todo block: ", fmt, ap);
            state.failures++;
        } else {
            vreport("Test marked todo: ", fmt, ap);
            state.todos++;
        }
    } else if (!condition) {
        vreport("Test failed: ", fmt, ap);
        state.failures++;
    }
    va_end(ap);
    return condition;
}

void kmtw_skip(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vreport("Tests skipped: ", fmt, ap);
    va_end(ap);
    state.skipped++;
}

void kmtw_trace(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vreport("", fmt, ap);
    va_end(ap);
}

void kmtw_todo_push(int active)
{
    if (state.todo_depth == TODO_DEPTH) {
        printf("kmtwtest: todo blocks nested too deep\n");
        ExitProcess(2);
    }
    state.todo_active[state.todo_depth] = (unsigned char)active;
    state.todo_entered[state.todo_depth] = 0;
    state.todo_depth++;
}

int kmtw_todo_pop(void)
{
    unsigned top = state.todo_depth - 1;

    if (!state.todo_entered[top]) {
        state.todo_entered[top] = 1;     /* first time: run the body */
        return 1;
    }
    state.todo_depth--;
    return 0;
}

unsigned kmtw_failures(void)
{
    return state.failures;
}

/* A crash must not look like a clean run: say where, then let the process
 * die with the exception code (no summary line). */
static LONG WINAPI crash_filter(EXCEPTION_POINTERS *info)
{
    printf("%s: exception %#lx at %p in subtest %s (last check %s:%d)\n", state.prog,
           (unsigned long)info->ExceptionRecord->ExceptionCode,
           info->ExceptionRecord->ExceptionAddress, state.subtest ? state.subtest : "-",
           state.file ? base_name(state.file) : "-", state.line);
    fflush(stdout);
    return EXCEPTION_EXECUTE_HANDLER;
}

static BOOL selected(const char *name, int argc, char **argv)
{
    if (argc < 2)
        return TRUE;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], name))
            return TRUE;
    return FALSE;
}

int kmtw_run(const char *prog, const struct kmtw_test *tests, unsigned count, int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    SetUnhandledExceptionFilter(crash_filter);
    state.prog = prog;
    for (unsigned i = 0; i < count; i++) {
        unsigned executed = state.executed, failures = state.failures;
        unsigned todos = state.todos, skipped = state.skipped;

        if (!selected(tests[i].name, argc, argv))
            continue;
        state.subtest = tests[i].name;
        tests[i].func();
        if (state.todo_depth) {
            printf("kmtwtest: subtest %s left a todo block open\n", tests[i].name);
            state.failures++;
            state.todo_depth = 0;
        }
        printf("kmtw-subtest: %s:%s %u %u %u %u\n", prog, tests[i].name,
               state.executed - executed, state.failures - failures, state.todos - todos,
               state.skipped - skipped);
    }
    state.subtest = NULL;
    printf("%s: %u tests executed (%u marked as todo, %u failures), %u skipped.\n", prog,
           state.executed, state.todos, state.failures, state.skipped);
    return state.failures ? 1 : 0;
}
