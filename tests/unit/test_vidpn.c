/*
 * VidPn source ownership and occlusion (SetVidPnSourceOwner and its 1/2
 * forms, CheckVidPnExclusiveOwnership, CheckExclusiveOwnership,
 * CheckOcclusion), SetQueuedLimit, GetOverlayState and the process
 * scheduling priority class, on the software adapter with two VidPn
 * sources (KMTSHIM_SOFT_SOURCES).  Every row of the notes' "VidPn source
 * ownership and occlusion" section has a case here.
 */
#include <pthread.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define GARBAGE_PTR ((void *)0xdeadbeefdeadbeefull)
#define GARBAGE_HANDLE 0x40001240u
#define SOURCES 2u
#define FAKE_HWND ((HWND)(uintptr_t)0x10020)

#define UNOWNED D3DKMT_VIDPNSOURCEOWNER_UNOWNED
#define SHARED D3DKMT_VIDPNSOURCEOWNER_SHARED
#define EXCLUSIVE D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE
#define EXCLUSIVEGDI D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVEGDI
#define EMULATED D3DKMT_VIDPNSOURCEOWNER_EMULATED

static D3DKMT_HANDLE adapter, device;

static void setup(void)
{
    setenv("KMTSHIM_SOFT_SOURCES", "2", 1);
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

static void teardown(void)
{
    kmt_test_shutdown_no_leaks();
}

static D3DKMT_HANDLE second_device(void)
{
    D3DKMT_CREATEDEVICE c = { .hAdapter = adapter };

    ck_assert_status(D3DKMTCreateDevice(&c), STATUS_SUCCESS);
    return c.hDevice;
}

static void destroy_device(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYDEVICE d = { h };

    ck_assert_status(D3DKMTDestroyDevice(&d), STATUS_SUCCESS);
}

static NTSTATUS set_owner(D3DKMT_HANDLE dev, int type, UINT source)
{
    D3DKMT_VIDPNSOURCEOWNER_TYPE t = (D3DKMT_VIDPNSOURCEOWNER_TYPE)type;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID id = source;
    D3DKMT_SETVIDPNSOURCEOWNER s = { dev, &t, &id, 1 };

    return D3DKMTSetVidPnSourceOwner(&s);
}

static NTSTATUS clear_owner(D3DKMT_HANDLE dev)
{
    D3DKMT_SETVIDPNSOURCEOWNER s = { dev, NULL, NULL, 0 };

    return D3DKMTSetVidPnSourceOwner(&s);
}

static NTSTATUS check(UINT source)
{
    D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP c = { adapter, source };

    return D3DKMTCheckVidPnExclusiveOwnership(&c);
}

static NTSTATUS occlusion(void)
{
    D3DKMT_CHECKOCCLUSION o = { FAKE_HWND };

    return D3DKMTCheckOcclusion(&o);
}

/* ---- one device ----------------------------------------------------------- */

START_TEST(unowned_is_success)
{
    ck_assert_status(set_owner(device, UNOWNED, 0), STATUS_SUCCESS);
    ck_assert_status(check(0), STATUS_SUCCESS);
    ck_assert_int_eq(D3DKMTCheckExclusiveOwnership(), FALSE);
}
END_TEST

START_TEST(shared_is_in_use_in_every_state)
{
    ck_assert_status(set_owner(device, SHARED, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
    ck_assert_status(set_owner(device, EMULATED, 0), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, SHARED, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
    ck_assert_status(clear_owner(device), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, SHARED, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
    /* the failed SHARED took nothing */
    ck_assert_status(check(0), STATUS_SUCCESS);
}
END_TEST

START_TEST(shared_after_exclusive_is_invalid)
{
    ck_assert_status(set_owner(device, EXCLUSIVE, 0), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, SHARED, 0), STATUS_INVALID_PARAMETER);
    /* and EXCLUSIVE holds */
    ck_assert_status(check(0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
}
END_TEST

START_TEST(exclusivegdi_and_unknown_types_are_invalid)
{
    static const int bad[] = { EXCLUSIVEGDI, EMULATED + 1, 100, -1, 0x7fffffff };

    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_status(set_owner(device, bad[i], 0), STATUS_INVALID_PARAMETER);
        /* a bad type on a bad source is still a bad type */
        ck_assert_status(set_owner(device, bad[i], SOURCES), STATUS_INVALID_PARAMETER);
    }
    ck_assert_status(check(0), STATUS_SUCCESS);
    ck_assert_int_eq(D3DKMTCheckExclusiveOwnership(), FALSE);
}
END_TEST

START_TEST(exclusive_occludes)
{
    ck_assert_int_eq(D3DKMTCheckExclusiveOwnership(), FALSE);
    ck_assert_status(occlusion(), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, EXCLUSIVE, 0), STATUS_SUCCESS);
    ck_assert_status(check(0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
    ck_assert_status(check(1), STATUS_SUCCESS);          /* the other source */
    ck_assert_int_eq(D3DKMTCheckExclusiveOwnership(), TRUE);
    ck_assert_status(occlusion(), STATUS_GRAPHICS_PRESENT_OCCLUDED);
    /* repeating it is fine */
    ck_assert_status(set_owner(device, EXCLUSIVE, 0), STATUS_SUCCESS);
    ck_assert_status(check(0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
}
END_TEST

START_TEST(emulated_does_not_occlude)
{
    ck_assert_status(set_owner(device, EMULATED, 0), STATUS_SUCCESS);
    ck_assert_status(check(0), STATUS_SUCCESS);
    ck_assert_int_eq(D3DKMTCheckExclusiveOwnership(), FALSE);
    ck_assert_status(occlusion(), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, EMULATED, 0), STATUS_SUCCESS);
}
END_TEST

START_TEST(exclusive_and_emulated_do_not_mix)
{
    ck_assert_status(set_owner(device, EXCLUSIVE, 0), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, EMULATED, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(check(0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
    ck_assert_status(clear_owner(device), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, EMULATED, 0), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, EXCLUSIVE, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(check(0), STATUS_SUCCESS);
}
END_TEST

START_TEST(clearing_releases)
{
    ck_assert_status(set_owner(device, EXCLUSIVE, 0), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, EXCLUSIVE, 1), STATUS_SUCCESS);
    ck_assert_status(clear_owner(device), STATUS_SUCCESS);
    ck_assert_status(check(0), STATUS_SUCCESS);
    ck_assert_status(check(1), STATUS_SUCCESS);
    ck_assert_int_eq(D3DKMTCheckExclusiveOwnership(), FALSE);
    ck_assert_status(occlusion(), STATUS_SUCCESS);
    /* clearing what is not owned is fine too */
    ck_assert_status(clear_owner(device), STATUS_SUCCESS);
    /* UNOWNED releases one source */
    ck_assert_status(set_owner(device, EXCLUSIVE, 1), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, UNOWNED, 1), STATUS_SUCCESS);
    ck_assert_status(check(1), STATUS_SUCCESS);
}
END_TEST

START_TEST(several_entries_all_or_nothing)
{
    D3DKMT_VIDPNSOURCEOWNER_TYPE t[2] = { EXCLUSIVE, EXCLUSIVE };
    D3DDDI_VIDEO_PRESENT_SOURCE_ID id[2] = { 0, SOURCES };
    D3DKMT_SETVIDPNSOURCEOWNER s = { device, t, id, 2 };

    /* the second entry is bad: the first is not applied either */
    ck_assert_status(D3DKMTSetVidPnSourceOwner(&s), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(check(0), STATUS_SUCCESS);
    id[1] = 1;
    t[1] = EMULATED;
    ck_assert_status(D3DKMTSetVidPnSourceOwner(&s), STATUS_SUCCESS);
    ck_assert_status(check(0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
    ck_assert_status(check(1), STATUS_SUCCESS);
    /* one call asking both types of one source */
    ck_assert_status(clear_owner(device), STATUS_SUCCESS);
    id[1] = 0;
    ck_assert_status(D3DKMTSetVidPnSourceOwner(&s), STATUS_INVALID_PARAMETER);
    ck_assert_status(check(0), STATUS_SUCCESS);
}
END_TEST

/* ---- two devices ---------------------------------------------------------- */

START_TEST(second_device_is_refused)
{
    D3DKMT_HANDLE other = second_device();
    static const int first[] = { EXCLUSIVE, EMULATED };

    for (unsigned i = 0; i < 2; i++) {
        ck_assert_status(set_owner(device, first[i], 0), STATUS_SUCCESS);
        ck_assert_status(set_owner(other, EXCLUSIVE, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
        ck_assert_status(set_owner(other, EMULATED, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
        ck_assert_status(set_owner(other, SHARED, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
        /* the other source is free */
        ck_assert_status(set_owner(other, first[i], 1), STATUS_SUCCESS);
        ck_assert_status(clear_owner(other), STATUS_SUCCESS);
        ck_assert_status(clear_owner(device), STATUS_SUCCESS);
    }
    /* freed: the second device can take it */
    ck_assert_status(set_owner(other, EXCLUSIVE, 0), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, EXCLUSIVE, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
    destroy_device(other);
}
END_TEST

START_TEST(clearing_from_non_owner_changes_nothing)
{
    D3DKMT_HANDLE other = second_device();

    ck_assert_status(set_owner(device, EXCLUSIVE, 0), STATUS_SUCCESS);
    ck_assert_status(clear_owner(other), STATUS_SUCCESS);
    ck_assert_status(set_owner(other, UNOWNED, 0), STATUS_SUCCESS);
    ck_assert_status(check(0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
    ck_assert_status(set_owner(other, EXCLUSIVE, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
    destroy_device(other);
    ck_assert_status(check(0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
}
END_TEST

START_TEST(destroying_the_owner_releases)
{
    D3DKMT_HANDLE other = second_device();

    ck_assert_status(set_owner(other, EXCLUSIVE, 0), STATUS_SUCCESS);
    ck_assert_status(set_owner(other, EMULATED, 1), STATUS_SUCCESS);
    ck_assert_int_eq(D3DKMTCheckExclusiveOwnership(), TRUE);
    destroy_device(other);
    ck_assert_status(check(0), STATUS_SUCCESS);
    ck_assert_int_eq(D3DKMTCheckExclusiveOwnership(), FALSE);
    ck_assert_status(set_owner(device, EXCLUSIVE, 0), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, EXCLUSIVE, 1), STATUS_SUCCESS);
    /* the destroyed device's handle is dead */
    ck_assert_status(clear_owner(other), STATUS_INVALID_PARAMETER);
}
END_TEST

/* Two threads race for one source: exactly one wins each round. */
struct race {
    D3DKMT_HANDLE device;
    pthread_barrier_t *barrier;
    unsigned wins;
};

static void *race_thread(void *arg)
{
    struct race *r = arg;

    for (int i = 0; i < 200; i++) {
        NTSTATUS s;

        pthread_barrier_wait(r->barrier);
        s = set_owner(r->device, EXCLUSIVE, 0);
        if (!s)
            r->wins++;
        else if (s != STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE)
            return (void *)1;
        pthread_barrier_wait(r->barrier);
        if (clear_owner(r->device))
            return (void *)1;
    }
    return NULL;
}

START_TEST(threads_race_for_a_source)
{
    pthread_barrier_t barrier;
    struct race r[2] = { { device, &barrier, 0 }, { second_device(), &barrier, 0 } };
    pthread_t t[2];
    void *ret;

    pthread_barrier_init(&barrier, NULL, 2);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, race_thread, &r[i]), 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], &ret);
        ck_assert_ptr_null(ret);
    }
    pthread_barrier_destroy(&barrier);
    ck_assert_uint_eq(r[0].wins + r[1].wins, 200);
    destroy_device(r[1].device);
}
END_TEST

/* ---- bad input ------------------------------------------------------------ */

START_TEST(set_owner_bad_input)
{
    D3DKMT_VIDPNSOURCEOWNER_TYPE t = EXCLUSIVE;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID id = 0;
    D3DKMT_SETVIDPNSOURCEOWNER zero = { 0 };
    D3DKMT_SETVIDPNSOURCEOWNER s;

    ck_assert_status(D3DKMTSetVidPnSourceOwner(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTSetVidPnSourceOwner(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTSetVidPnSourceOwner(&zero), STATUS_INVALID_PARAMETER);
    s = (D3DKMT_SETVIDPNSOURCEOWNER){ GARBAGE_HANDLE, &t, &id, 1 };
    ck_assert_status(D3DKMTSetVidPnSourceOwner(&s), STATUS_INVALID_PARAMETER);
    s = (D3DKMT_SETVIDPNSOURCEOWNER){ adapter, &t, &id, 1 };      /* not a device */
    ck_assert_status(D3DKMTSetVidPnSourceOwner(&s), STATUS_INVALID_PARAMETER);
    s = (D3DKMT_SETVIDPNSOURCEOWNER){ device, NULL, &id, 1 };
    ck_assert_status(D3DKMTSetVidPnSourceOwner(&s), STATUS_INVALID_PARAMETER);
    s = (D3DKMT_SETVIDPNSOURCEOWNER){ device, &t, NULL, 1 };
    ck_assert_status(D3DKMTSetVidPnSourceOwner(&s), STATUS_INVALID_PARAMETER);
    s = (D3DKMT_SETVIDPNSOURCEOWNER){ device, GARBAGE_PTR, GARBAGE_PTR, 1 };
    ck_assert_status(D3DKMTSetVidPnSourceOwner(&s), STATUS_INVALID_PARAMETER);
    s = (D3DKMT_SETVIDPNSOURCEOWNER){ device, &t, &id, 0xffffffffu };
    ck_assert_status(D3DKMTSetVidPnSourceOwner(&s), STATUS_INVALID_PARAMETER);
    /* source ids past the adapter's sources */
    ck_assert_status(set_owner(device, EXCLUSIVE, SOURCES), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(set_owner(device, UNOWNED, 0xffffffffu), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(check(0), STATUS_SUCCESS);
}
END_TEST

START_TEST(set_owner1_and_2)
{
    D3DKMT_VIDPNSOURCEOWNER_TYPE t = EXCLUSIVE;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID id = 0;
    HANDLE nt = (HANDLE)(uintptr_t)0x44;
    D3DKMT_SETVIDPNSOURCEOWNER1 s1 = { { device, &t, &id, 1 }, { .Value = 0 } };
    D3DKMT_SETVIDPNSOURCEOWNER2 s2 = { { { device, &t, &id, 1 }, { .Value = 0 } }, NULL };
    D3DKMT_SETVIDPNSOURCEOWNER1 zero1 = { { 0 } };
    D3DKMT_SETVIDPNSOURCEOWNER2 zero2 = { { { 0 } } };

    ck_assert_status(D3DKMTSetVidPnSourceOwner1(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTSetVidPnSourceOwner2(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTSetVidPnSourceOwner1(&zero1), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTSetVidPnSourceOwner2(&zero2), STATUS_INVALID_PARAMETER);

    s1.Flags.AllowOutputDuplication = 1;
    ck_assert_status(D3DKMTSetVidPnSourceOwner1(&s1), STATUS_SUCCESS);
    ck_assert_status(check(0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
    s1.Version0.VidPnSourceCount = 0;
    ck_assert_status(D3DKMTSetVidPnSourceOwner1(&s1), STATUS_SUCCESS);
    ck_assert_status(check(0), STATUS_SUCCESS);
    s1.Version0.VidPnSourceCount = 1;
    s1.Flags.Value = 1u << 3;                               /* reserved */
    ck_assert_status(D3DKMTSetVidPnSourceOwner1(&s1), STATUS_INVALID_PARAMETER);
    s1.Flags.Value = 0;
    s1.Flags.UseNtHandles = 1;                              /* only the 2 form has them */
    ck_assert_status(D3DKMTSetVidPnSourceOwner1(&s1), STATUS_INVALID_PARAMETER);

    t = EMULATED;
    ck_assert_status(D3DKMTSetVidPnSourceOwner2(&s2), STATUS_SUCCESS);
    ck_assert_status(check(0), STATUS_SUCCESS);
    s2.Version1.Flags.UseNtHandles = 1;
    ck_assert_status(D3DKMTSetVidPnSourceOwner2(&s2), STATUS_INVALID_PARAMETER);   /* no handles */
    s2.pVidPnSourceNtHandles = &nt;
    ck_assert_status(D3DKMTSetVidPnSourceOwner2(&s2), STATUS_SUCCESS);
    s2.Version1.Version0.VidPnSourceCount = 0;
    s2.pVidPnSourceNtHandles = NULL;
    ck_assert_status(D3DKMTSetVidPnSourceOwner2(&s2), STATUS_SUCCESS);
    ck_assert_status(set_owner(device, EXCLUSIVE, 0), STATUS_SUCCESS);   /* released */
}
END_TEST

START_TEST(check_bad_input)
{
    D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP zero = { 0 };
    D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP c = { GARBAGE_HANDLE, 0 };

    ck_assert_status(D3DKMTCheckVidPnExclusiveOwnership(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCheckVidPnExclusiveOwnership(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCheckVidPnExclusiveOwnership(&zero), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCheckVidPnExclusiveOwnership(&c), STATUS_INVALID_PARAMETER);
    c.hAdapter = device;                                    /* not an adapter */
    ck_assert_status(D3DKMTCheckVidPnExclusiveOwnership(&c), STATUS_INVALID_PARAMETER);
    ck_assert_status(check(SOURCES), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(check(0xffffffffu), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
}
END_TEST

START_TEST(occlusion_bad_input)
{
    D3DKMT_CHECKOCCLUSION zero = { 0 };

    ck_assert_status(D3DKMTCheckOcclusion(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCheckOcclusion(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCheckOcclusion(&zero), STATUS_INVALID_PARAMETER);
    ck_assert_status(set_owner(device, EXCLUSIVE, 1), STATUS_SUCCESS);
    ck_assert_status(D3DKMTCheckOcclusion(&zero), STATUS_INVALID_PARAMETER);
}
END_TEST

/* ---- a render-only adapter has no source ------------------------------------ */

static void setup_render_only(void)
{
    setenv("KMTSHIM_SOFT_SOURCES", "0", 1);
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

START_TEST(render_only_has_no_source)
{
    ck_assert_status(set_owner(device, EXCLUSIVE, 0), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(check(0), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(clear_owner(device), STATUS_SUCCESS);
    ck_assert_int_eq(D3DKMTCheckExclusiveOwnership(), FALSE);
}
END_TEST

/* ---- SetQueuedLimit, GetOverlayState ------------------------------------------ */

static UINT get_limit(void)
{
    D3DKMT_SETQUEUEDLIMIT q = { device, D3DKMT_GET_QUEUEDLIMIT_PRESENT, { 0xdead } };

    ck_assert_status(D3DKMTSetQueuedLimit(&q), STATUS_SUCCESS);
    return q.QueuedPresentLimit;
}

START_TEST(queued_limit)
{
    D3DKMT_SETQUEUEDLIMIT q = { device, D3DKMT_SET_QUEUEDLIMIT_PRESENT, { 7 } };
    D3DKMT_SETQUEUEDLIMIT zero = { 0 };

    ck_assert_uint_eq(get_limit(), 3);                      /* the documented default */
    ck_assert_status(D3DKMTSetQueuedLimit(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.QueuedPresentLimit, 7);             /* SET writes nothing back */
    ck_assert_uint_eq(get_limit(), 7);
    q.QueuedPresentLimit = 0;
    ck_assert_status(D3DKMTSetQueuedLimit(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(get_limit(), 3);

    ck_assert_status(D3DKMTSetQueuedLimit(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTSetQueuedLimit(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTSetQueuedLimit(&zero), STATUS_INVALID_PARAMETER);
    q.Type = (D3DKMT_QUEUEDLIMIT_TYPE)0;
    ck_assert_status(D3DKMTSetQueuedLimit(&q), STATUS_INVALID_PARAMETER);
    q.Type = (D3DKMT_QUEUEDLIMIT_TYPE)3;
    ck_assert_status(D3DKMTSetQueuedLimit(&q), STATUS_INVALID_PARAMETER);
    q.Type = D3DKMT_SET_QUEUEDLIMIT_PRESENT;
    q.hDevice = GARBAGE_HANDLE;
    ck_assert_status(D3DKMTSetQueuedLimit(&q), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(overlay_state)
{
    D3DKMT_GETOVERLAYSTATE o = { device, GARBAGE_HANDLE, 0x55 };
    D3DKMT_GETOVERLAYSTATE zero = { 0 };

    ck_assert_status(D3DKMTGetOverlayState(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTGetOverlayState(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTGetOverlayState(&zero), STATUS_INVALID_PARAMETER);
    /* no overlay exists: no hOverlay names one */
    ck_assert_status(D3DKMTGetOverlayState(&o), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(o.OverlayEnabled, 0x55);              /* a failure writes nothing */
    o.hOverlay = 0;
    ck_assert_status(D3DKMTGetOverlayState(&o), STATUS_INVALID_PARAMETER);
    o.hDevice = GARBAGE_HANDLE;
    ck_assert_status(D3DKMTGetOverlayState(&o), STATUS_INVALID_PARAMETER);
}
END_TEST

/* ---- process scheduling priority class ---------------------------------------- */

#define CURRENT_PROCESS ((HANDLE)(intptr_t)-1)

static D3DKMT_SCHEDULINGPRIORITYCLASS get_class(HANDLE process)
{
    D3DKMT_SCHEDULINGPRIORITYCLASS c = (D3DKMT_SCHEDULINGPRIORITYCLASS)0x55;

    ck_assert_status(D3DKMTGetProcessSchedulingPriorityClass(process, &c), STATUS_SUCCESS);
    return c;
}

START_TEST(priority_class_round_trip)
{
    ck_assert_int_eq(get_class(NULL), D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL);
    for (int c = D3DKMT_SCHEDULINGPRIORITYCLASS_IDLE; c <= D3DKMT_SCHEDULINGPRIORITYCLASS_HIGH; c++) {
        ck_assert_status(D3DKMTSetProcessSchedulingPriorityClass(c & 1 ? NULL : CURRENT_PROCESS,
                                                                 (D3DKMT_SCHEDULINGPRIORITYCLASS)c),
                         STATUS_SUCCESS);
        ck_assert_int_eq(get_class(NULL), c);
        ck_assert_int_eq(get_class(CURRENT_PROCESS), c);
    }
}
END_TEST

START_TEST(priority_class_bad_input)
{
    D3DKMT_SCHEDULINGPRIORITYCLASS c = (D3DKMT_SCHEDULINGPRIORITYCLASS)0x55;

    ck_assert_status(D3DKMTSetProcessSchedulingPriorityClass(NULL, (D3DKMT_SCHEDULINGPRIORITYCLASS)6),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTSetProcessSchedulingPriorityClass(NULL, (D3DKMT_SCHEDULINGPRIORITYCLASS)-1),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTSetProcessSchedulingPriorityClass((HANDLE)(uintptr_t)0x1234,
                                                             D3DKMT_SCHEDULINGPRIORITYCLASS_HIGH),
                     STATUS_INVALID_HANDLE);
    ck_assert_status(D3DKMTGetProcessSchedulingPriorityClass(NULL, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTGetProcessSchedulingPriorityClass(NULL, GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTGetProcessSchedulingPriorityClass((HANDLE)(uintptr_t)0x1234, &c),
                     STATUS_INVALID_HANDLE);
    ck_assert_int_eq(c, 0x55);
    /* nothing changed */
    ck_assert_int_eq(get_class(NULL), D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL);
}
END_TEST

/* REALTIME needs root or CAP_SYS_NICE: this process's answer follows what
 * it holds, and a child that gave up root (and with it every capability)
 * is refused. */
START_TEST(priority_class_realtime_needs_privilege)
{
    bool privileged = geteuid() == 0;
    NTSTATUS expected;
    pid_t pid;
    int status;

    if (!privileged) {
        /* CAP_SYS_NICE without root: ask the kernel the way the core does */
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        unsigned long long eff = 0;

        while (f && fgets(line, sizeof(line), f))
            if (sscanf(line, "CapEff: %llx", &eff) == 1)
                break;
        if (f)
            fclose(f);
        privileged = eff & (1ull << 23);
    }
    expected = privileged ? STATUS_SUCCESS : STATUS_PRIVILEGE_NOT_HELD;
    ck_assert_status(D3DKMTSetProcessSchedulingPriorityClass(NULL, D3DKMT_SCHEDULINGPRIORITYCLASS_REALTIME),
                     expected);
    ck_assert_int_eq(get_class(NULL), privileged ? D3DKMT_SCHEDULINGPRIORITYCLASS_REALTIME
                                                 : D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL);

    if (geteuid() != 0)
        return;                          /* no way to lose CAP_SYS_NICE we lack */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    /* The child's first call starts the library's threads in a child of a
     * multi-threaded process: TSan kills such a child (exit 66) and ASan's
     * allocator can hang in it (test_fork skips its children likewise). */
    return;
#endif
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (!pid) {
        D3DKMT_SCHEDULINGPRIORITYCLASS c = D3DKMT_SCHEDULINGPRIORITYCLASS_IDLE;

        if (setgid(65534) || setuid(65534))
            _exit(2);
        /* a fork()ed process starts at NORMAL, and may not take REALTIME */
        if (D3DKMTGetProcessSchedulingPriorityClass(NULL, &c) || c != D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL)
            _exit(3);
        if (D3DKMTSetProcessSchedulingPriorityClass(NULL, D3DKMT_SCHEDULINGPRIORITYCLASS_REALTIME) !=
            STATUS_PRIVILEGE_NOT_HELD)
            _exit(4);
        if (D3DKMTSetProcessSchedulingPriorityClass(NULL, D3DKMT_SCHEDULINGPRIORITYCLASS_HIGH))
            _exit(5);
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("vidpn");
    TCase *one = tcase_create("one_device");
    TCase *two = tcase_create("two_devices");
    TCase *bad = tcase_create("bad_input");
    TCase *render = tcase_create("render_only");
    TCase *present = tcase_create("present");
    TCase *priority = tcase_create("priority");

    tcase_add_checked_fixture(one, setup, teardown);
    tcase_add_test(one, unowned_is_success);
    tcase_add_test(one, shared_is_in_use_in_every_state);
    tcase_add_test(one, shared_after_exclusive_is_invalid);
    tcase_add_test(one, exclusivegdi_and_unknown_types_are_invalid);
    tcase_add_test(one, exclusive_occludes);
    tcase_add_test(one, emulated_does_not_occlude);
    tcase_add_test(one, exclusive_and_emulated_do_not_mix);
    tcase_add_test(one, clearing_releases);
    tcase_add_test(one, several_entries_all_or_nothing);
    suite_add_tcase(s, one);

    tcase_add_checked_fixture(two, setup, teardown);
    tcase_add_test(two, second_device_is_refused);
    tcase_add_test(two, clearing_from_non_owner_changes_nothing);
    tcase_add_test(two, destroying_the_owner_releases);
    tcase_add_test(two, threads_race_for_a_source);
    suite_add_tcase(s, two);

    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, set_owner_bad_input);
    tcase_add_test(bad, set_owner1_and_2);
    tcase_add_test(bad, check_bad_input);
    tcase_add_test(bad, occlusion_bad_input);
    suite_add_tcase(s, bad);

    tcase_add_checked_fixture(render, setup_render_only, teardown);
    tcase_add_test(render, render_only_has_no_source);
    suite_add_tcase(s, render);

    tcase_add_checked_fixture(present, setup, teardown);
    tcase_add_test(present, queued_limit);
    tcase_add_test(present, overlay_state);
    suite_add_tcase(s, present);

    tcase_add_checked_fixture(priority, setup, teardown);
    tcase_add_test(priority, priority_class_round_trip);
    tcase_add_test(priority, priority_class_bad_input);
    tcase_add_test(priority, priority_class_realtime_needs_privilege);
    suite_add_tcase(s, priority);
    return kmt_test_run(s);
}
