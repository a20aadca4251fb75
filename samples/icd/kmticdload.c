/*
 * kmticdload.exe: finds and loads an OpenGL ICD the way opengl32 does on
 * WDDM, and runs kmticd.dll's D3DKMT round trip through it.
 *
 *   enumerate adapters -> QueryAdapterInfo(KMTQAITYPE_UMOPENGLINFO) ->
 *   LoadLibraryW(the ICD file) -> DrvValidateVersion(the adapter's Version)
 *   -> DrvCreateContext -> DrvSetContext -> DrvGetProcAddress -> the round
 *   trip -> DrvReleaseContext -> DrvDeleteContext -> FreeLibrary
 *
 * Exit status: 0 and a last line "kmticdload: OK" when all of it worked;
 * 2 no adapter names an ICD, 3 the ICD does not load, 4 it lacks an entry
 * point, 5 it refuses the version, 1 anything else.  Run it under Wine with
 * kmtshim.dll, the ICD named by the configuration (docs/umd.md).
 */
#include <stdio.h>
#include <string.h>

#include "kmticd.h"

struct icd {
    HMODULE module;
    PFN_KMTICDSETADAPTERLUID set_luid;
    PFN_DRVVALIDATEVERSION validate;
    PFN_DRVCREATECONTEXT create;
    PFN_DRVSETCONTEXT set;
    PFN_DRVRELEASECONTEXT release;
    PFN_DRVDELETECONTEXT destroy;
    PFN_DRVGETPROCADDRESS get_proc;
};

/* The first adapter that names an ICD; its handle stays open in *adapter. */
static BOOL find_icd(D3DKMT_ADAPTERINFO *adapter, D3DKMT_OPENGLINFO *gl)
{
    D3DKMT_ADAPTERINFO infos[MAX_ENUM_ADAPTERS];
    D3DKMT_ENUMADAPTERS2 e = { MAX_ENUM_ADAPTERS, infos };
    NTSTATUS status, last = STATUS_OBJECT_NAME_NOT_FOUND;
    BOOL found = FALSE;

    if ((status = D3DKMTEnumAdapters2(&e))) {
        printf("kmticdload: D3DKMTEnumAdapters2: NTSTATUS 0x%08lx\n", (unsigned long)status);
        return FALSE;
    }
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        D3DKMT_QUERYADAPTERINFO q = { infos[i].hAdapter, KMTQAITYPE_UMOPENGLINFO, gl, sizeof(*gl) };
        D3DKMT_CLOSEADAPTER c = { infos[i].hAdapter };

        memset(gl, 0, sizeof(*gl));
        if (!found && !(last = D3DKMTQueryAdapterInfo(&q))) {
            *adapter = infos[i];
            found = TRUE;
            continue;
        }
        D3DKMTCloseAdapter(&c);
    }
    if (!found)
        printf("kmticdload: no adapter names an OpenGL ICD (QueryAdapterInfo(UMOPENGLINFO): NTSTATUS 0x%08lx)\n",
               (unsigned long)last);
    return found;
}

/* GetProcAddress into a typed pointer; false (with a line) if missing. */
static BOOL entry(HMODULE module, const char *name, void *out)
{
    FARPROC proc = GetProcAddress(module, name);

    if (!proc)
        printf("kmticdload: the ICD lacks %s\n", name);
    memcpy(out, &proc, sizeof(proc));
    return proc != NULL;
}

static int load_icd(const D3DKMT_OPENGLINFO *gl, struct icd *icd)
{
    BOOL ok;

    if (!(icd->module = LoadLibraryW(gl->UmdOpenGlIcdFileName))) {
        printf("kmticdload: cannot load %ls (error %lu)\n", gl->UmdOpenGlIcdFileName, GetLastError());
        return 3;
    }
    printf("kmticdload: loaded %ls\n", gl->UmdOpenGlIcdFileName);
    ok = entry(icd->module, "DrvValidateVersion", &icd->validate);
    ok &= entry(icd->module, "DrvCreateContext", &icd->create);
    ok &= entry(icd->module, "DrvSetContext", &icd->set);
    ok &= entry(icd->module, "DrvReleaseContext", &icd->release);
    ok &= entry(icd->module, "DrvDeleteContext", &icd->destroy);
    ok &= entry(icd->module, "DrvGetProcAddress", &icd->get_proc);
    ok &= entry(icd->module, "KmtIcdSetAdapterLuid", &icd->set_luid);
    return ok ? 0 : 4;
}

/* Context, round trip, teardown; 0 when all of it worked. */
static int run_icd(const struct icd *icd, const LUID *luid)
{
    const KMTICD_PROCTABLE *table;
    PFN_KMTICD_ROUNDTRIP roundtrip;
    KMTICD_DHGLRC context;
    PROC proc;
    int failures = 0;

    icd->set_luid(luid);
    if (!(context = icd->create(NULL))) {
        printf("kmticdload: DrvCreateContext failed\n");
        return 1;
    }
    if (!(table = icd->set(NULL, context, NULL)) || table->cEntries < 1) {
        printf("kmticdload: DrvSetContext failed\n");
        icd->destroy(context);
        return 1;
    }
    proc = icd->get_proc(KMTICD_ROUNDTRIP_NAME);
    memcpy(&roundtrip, &proc, sizeof(roundtrip));
    failures += !roundtrip || roundtrip != table->Entries[0];
    failures += icd->get_proc("glNoSuchFunction") != NULL;
    if (roundtrip && !roundtrip(0x5a5a5a5a))
        failures++;
    failures += !icd->release(context);
    failures += !icd->destroy(context);
    printf("kmticdload: round trip %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

int main(void)
{
    D3DKMT_ADAPTERINFO adapter;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_CLOSEADAPTER close;
    struct icd icd = { 0 };
    int rc;

    setvbuf(stdout, NULL, _IONBF, 0);    /* lines in order with the ICD's */
    if (!find_icd(&adapter, &gl))
        return 2;
    close.hAdapter = adapter.hAdapter;
    printf("kmticdload: adapter %08lx:%08lx names the OpenGL ICD %ls (version 0x%08lx, flags 0x%08lx)\n",
           (unsigned long)adapter.AdapterLuid.HighPart, (unsigned long)adapter.AdapterLuid.LowPart,
           gl.UmdOpenGlIcdFileName, (unsigned long)gl.Version, (unsigned long)gl.Flags);
    if ((rc = load_icd(&gl, &icd)))
        goto done;
    if (!icd.validate(gl.Version)) {
        printf("kmticdload: the ICD refuses version 0x%08lx\n", (unsigned long)gl.Version);
        rc = 5;
        goto done;
    }
    rc = run_icd(&icd, &adapter.AdapterLuid);
done:
    if (icd.module)
        FreeLibrary(icd.module);
    D3DKMTCloseAdapter(&close);
    if (!rc)
        printf("kmticdload: OK\n");
    return rc;
}
