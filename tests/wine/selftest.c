/*
 * The harness checking itself: the runner runs each mode and requires the
 * outcome it knows (a passing program, a failure, a pass inside a todo
 * block, a crash), so a harness or runner that cannot see failures fails.
 *
 *   selftest.exe pass       ok/todo/skip used correctly: 0 failures, exit 0
 *   selftest.exe fail       one failing ok(): 1 failure, exit 1
 *   selftest.exe todo-pass  a check that passes inside todo: 1 failure
 *   selftest.exe crash      an access violation: no summary line
 */
#include <string.h>

#include <windows.h>

#include "kmtwtest.h"

static void test_pass(void)
{
    ok(1 + 1 == 2, "arithmetic\n");
    todo ok(0, "a known gap\n");
    todo_if(0) ok(1, "not todo\n");
    skip("nothing to see\n");
}

static void test_fail(void)
{
    ok(1, "fine\n");
    ok(0, "this one fails on purpose\n");
}

static void test_todo_pass(void)
{
    todo ok(1, "fixed, so the todo must go\n");
}

static void test_crash(void)
{
    volatile int *p = (int *)(ULONG_PTR)0x10;

    ok(1, "before the crash\n");
    *p = 1;
}

static const struct kmtw_test pass[] = { { "pass", test_pass } };
static const struct kmtw_test fail[] = { { "pass", test_pass }, { "fail", test_fail } };
static const struct kmtw_test todo_pass[] = { { "todo_pass", test_todo_pass } };
static const struct kmtw_test crash[] = { { "crash", test_crash } };

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "pass";

    if (!strcmp(mode, "fail"))
        return kmtw_run("selftest", fail, ARRAY_SIZE(fail), 1, argv);
    if (!strcmp(mode, "todo-pass"))
        return kmtw_run("selftest", todo_pass, ARRAY_SIZE(todo_pass), 1, argv);
    if (!strcmp(mode, "crash"))
        return kmtw_run("selftest", crash, ARRAY_SIZE(crash), 1, argv);
    return kmtw_run("selftest", pass, ARRAY_SIZE(pass), 1, argv);
}
