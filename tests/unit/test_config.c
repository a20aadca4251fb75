/*
 * The UMD / OpenGL ICD configuration (dlls/kmtshim/dxgkrnl/umd_config.c): the
 * parser on its own, then QueryAdapterInfo(UMDRIVERNAME / UMOPENGLINFO)
 * answering from a file and the environment on the software adapter and
 * on the recording miniport (whose own names are the default).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "contract_util.h"
#include "dxgkrnl/umd_config.h"
#include "base/kmt_debug.h"

static const struct dxgk_config_match soft_match = {
    .miniport = "soft", .vendor_id = 0x1414, .device_id = 0x008c,
    .luid = { .LowPart = 0x23e0c9f7, .HighPart = 0x0f4b7d98 },  /* the software adapter's */
};

static unsigned apply(const char *text, KMT_ADAPTER_DESC *desc)
{
    return dxgk_config_apply_text(text, strlen(text), "test.conf", &soft_match, desc);
}

static KMT_ADAPTER_DESC empty_desc(void)
{
    KMT_ADAPTER_DESC d;

    memset(&d, 0, sizeof(d));
    return d;
}

/* Parse errors are expected in these cases: keep stderr readable. */
static void quiet(void)
{
    setenv("KMTSHIM_DEBUG", "-all", 1);
    kmt_debug_reset();
}

static void set_wide(WCHAR *dst, const char *src)
{
    size_t i = 0;

    for (; src[i]; i++)
        dst[i] = (unsigned char)src[i];
    dst[i] = 0;
}

/* ---- the parser ------------------------------------------------------------------ */

START_TEST(parse_adapter_section_applies_to_every_adapter)
{
    KMT_ADAPTER_DESC d = empty_desc();

    ck_assert_uint_eq(apply("[adapter]\numd_dx9 = C:\\drivers\\umd9.dll\n", &d), 0);
    ck_assert(rec_wide_equals(d.UmdFileName[KMTUMDVERSION_DX9], "C:\\drivers\\umd9.dll"));
    ck_assert_uint_eq(d.UmdFileName[KMTUMDVERSION_DX10][0], 0);
    ck_assert_uint_eq(d.UmdFileName[KMTUMDVERSION_DX11][0], 0);
    ck_assert_uint_eq(d.UmdFileName[KMTUMDVERSION_DX12][0], 0);
    ck_assert_uint_eq(d.OpenGlIcdFileName[0], 0);
}
END_TEST

START_TEST(parse_every_key)
{
    KMT_ADAPTER_DESC d = empty_desc();
    const char *text =
        "[adapter]\n"
        "umd_dx9 = a9.dll\n"
        "umd_dx10 = a10.dll\n"
        "umd_dx11 = a11.dll\n"
        "umd_dx12 = a12.dll\n"
        "opengl_icd = C:\\gl\\icd64.dll\n"
        "opengl_version = 0x1100\n"
        "opengl_flags = 3\n";

    ck_assert_uint_eq(apply(text, &d), 0);
    ck_assert(rec_wide_equals(d.UmdFileName[0], "a9.dll"));
    ck_assert(rec_wide_equals(d.UmdFileName[1], "a10.dll"));
    ck_assert(rec_wide_equals(d.UmdFileName[2], "a11.dll"));
    ck_assert(rec_wide_equals(d.UmdFileName[3], "a12.dll"));
    ck_assert(rec_wide_equals(d.OpenGlIcdFileName, "C:\\gl\\icd64.dll"));
    ck_assert_uint_eq(d.OpenGlVersion, 0x1100);
    ck_assert_uint_eq(d.OpenGlFlags, 3);
}
END_TEST

START_TEST(parse_umd_sets_all_versions_and_empty_clears)
{
    KMT_ADAPTER_DESC d = empty_desc();

    ck_assert_uint_eq(apply("[adapter]\numd = all.dll\numd_dx12 =\n", &d), 0);
    for (unsigned v = 0; v < KMTUMDVERSION_DX12; v++)
        ck_assert(rec_wide_equals(d.UmdFileName[v], "all.dll"));
    ck_assert_uint_eq(d.UmdFileName[KMTUMDVERSION_DX12][0], 0);
}
END_TEST

START_TEST(parse_selectors)
{
    static const struct {
        const char *header;
        bool applies;
    } cases[] = {
        { "[adapter miniport=soft]", true },
        { "[adapter miniport=SOFT]", true },              /* names compare without case */
        { "[adapter miniport=drm]", false },
        { "[adapter pci=1414:008c]", true },
        { "[adapter pci=1414:008C]", true },
        { "[adapter pci=1414:*]", true },
        { "[adapter pci=8086:*]", false },
        { "[adapter pci=1414:008d]", false },
        { "[adapter luid=0f4b7d98:23e0c9f7]", true },
        { "[adapter luid=23e0c9f7:0f4b7d98]", false },    /* HighPart first */
        { "[adapter miniport=soft pci=1414:008c]", true },
        { "[adapter miniport=soft pci=10de:*]", false },  /* every selector must match */
        { "[ adapter   miniport=soft ]", true },
        { "[Adapter]", true },
    };

    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        KMT_ADAPTER_DESC d = empty_desc();
        char text[256];

        snprintf(text, sizeof(text), "%s\numd_dx11 = x.dll\n", cases[i].header);
        ck_assert_msg(apply(text, &d) == 0, "%s: problems", cases[i].header);
        ck_assert_msg(rec_wide_equals(d.UmdFileName[KMTUMDVERSION_DX11], cases[i].applies ? "x.dll" : ""),
                      "%s: applied %d, expected %d", cases[i].header,
                      d.UmdFileName[KMTUMDVERSION_DX11][0] != 0, cases[i].applies);
    }
}
END_TEST

START_TEST(parse_later_sections_override_earlier)
{
    KMT_ADAPTER_DESC d = empty_desc();
    const char *text =
        "[adapter]\n"
        "umd_dx9 = general.dll\n"
        "opengl_version = 1\n"
        "[adapter miniport=soft]\n"
        "umd_dx9 = soft.dll\n"
        "[adapter miniport=drm]\n"
        "umd_dx9 = drm.dll\n"
        "opengl_version = 7\n";

    ck_assert_uint_eq(apply(text, &d), 0);
    ck_assert(rec_wide_equals(d.UmdFileName[0], "soft.dll"));
    ck_assert_uint_eq(d.OpenGlVersion, 1);
}
END_TEST

START_TEST(parse_blanks_comments_quotes_crlf)
{
    KMT_ADAPTER_DESC d = empty_desc();
    const char *text =
        "# a comment\r\n"
        "   ; another = not a key\r\n"
        "\r\n"
        "\t[adapter]\t\r\n"
        "  umd_dx9\t=   \"  C:\\Program Files\\umd.dll  \"  \r\n"
        "opengl_icd=C:\\a#b;c.dll\r\n"
        "opengl_flags = 010";                             /* octal, no final newline */

    ck_assert_uint_eq(apply(text, &d), 0);
    ck_assert(rec_wide_equals(d.UmdFileName[0], "  C:\\Program Files\\umd.dll  "));
    ck_assert(rec_wide_equals(d.OpenGlIcdFileName, "C:\\a#b;c.dll"));
    ck_assert_uint_eq(d.OpenGlFlags, 8);
}
END_TEST

START_TEST(parse_utf8_paths_become_utf16)
{
    KMT_ADAPTER_DESC d = empty_desc();
    /* ö (2 bytes), € (3 bytes), U+1D11E (4 bytes: a surrogate pair) */
    static const WCHAR want[] = { 'C', ':', '\\', 0x00f6, 0x20ac, 0xd834, 0xdd1e, '.', 'd', 'l', 'l', 0 };

    ck_assert_uint_eq(apply("[adapter]\nopengl_icd = C:\\\xc3\xb6\xe2\x82\xac\xf0\x9d\x84\x9e.dll\n", &d), 0);
    ck_assert_int_eq(memcmp(d.OpenGlIcdFileName, want, sizeof(want)), 0);
}
END_TEST

START_TEST(parse_bad_lines_are_counted_and_skipped)
{
    static const struct {
        const char *text;
        unsigned problems;
    } cases[] = {
        { "umd_dx9 = early.dll\n", 1 },                             /* before any section */
        { "[adapter]\nunknown_key = 1\n", 1 },
        { "[adapter]\njust words\n", 1 },
        { "[adapter]\nopengl_version = twelve\n", 1 },
        { "[adapter]\nopengl_version = 0x100000000\n", 1 },         /* past 32 bits */
        { "[adapter]\nopengl_version = -1\n", 1 },
        { "[adapter]\nopengl_version =\n", 1 },
        { "[adaptor]\numd_dx9 = x.dll\n", 1 },                      /* header only */
        { "[adapter colour=red]\numd_dx9 = x.dll\n", 1 },
        { "[adapter miniport=]\n", 1 },
        { "[adapter pci=1414]\n", 1 },
        { "[adapter pci=xyz:1]\n", 1 },
        { "[adapter luid=1:*]\n", 1 },                              /* no wildcard for LUIDs */
        { "[adapter\n", 1 },
        { "[adapter]\numd_dx9 = \xc3\x28.dll\n", 1 },               /* invalid UTF-8 */
        { "[adapter]\numd_dx9 = \xc0\xaf.dll\n", 1 },               /* overlong */
        { "[adapter]\numd_dx9 = \xed\xa0\x80.dll\n", 1 },           /* a surrogate */
        { "[adapter miniport=drm]\nbogus = 1\n", 1 },               /* checked in other sections too */
    };

    quiet();
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        KMT_ADAPTER_DESC d = empty_desc();

        ck_assert_msg(apply(cases[i].text, &d) == cases[i].problems, "case %u: %u problems", i,
                      apply(cases[i].text, &d));
        ck_assert_msg(d.UmdFileName[0][0] == 0 && d.OpenGlVersion == 0, "case %u changed the adapter", i);
    }
}
END_TEST

START_TEST(parse_keys_after_a_bad_header_go_nowhere)
{
    KMT_ADAPTER_DESC d = empty_desc();
    const char *text =
        "[adapter]\n"
        "umd_dx9 = good.dll\n"
        "[adapter miniport=soft bogus]\n"
        "umd_dx9 = must_not_apply.dll\n"
        "[adapter]\n"
        "umd_dx10 = after.dll\n";

    quiet();
    ck_assert_uint_eq(apply(text, &d), 1);
    ck_assert(rec_wide_equals(d.UmdFileName[0], "good.dll"));
    ck_assert(rec_wide_equals(d.UmdFileName[1], "after.dll"));
}
END_TEST

START_TEST(parse_limits)
{
    KMT_ADAPTER_DESC d = empty_desc();
    char name[MAX_PATH + 32], text[8192];
    static const char nul_text[] = "[adapter]\numd_dx9 = a\0b.dll\numd_dx10 = ok.dll\n";

    quiet();
    /* MAX_PATH - 1 UTF-16 units fit, MAX_PATH do not */
    memset(name, 'n', MAX_PATH - 1);
    name[MAX_PATH - 1] = 0;
    snprintf(text, sizeof(text), "[adapter]\numd_dx9 = %s\n", name);
    ck_assert_uint_eq(apply(text, &d), 0);
    ck_assert_uint_eq(d.UmdFileName[0][MAX_PATH - 2], 'n');
    ck_assert_uint_eq(d.UmdFileName[0][MAX_PATH - 1], 0);
    memset(name, 'm', MAX_PATH);
    name[MAX_PATH] = 0;
    snprintf(text, sizeof(text), "[adapter]\numd_dx9 = %s\n", name);
    ck_assert_uint_eq(apply(text, &d), 1);
    ck_assert_uint_eq(d.UmdFileName[0][0], 'n');                    /* unchanged */
    /* a line longer than 4096 bytes */
    memset(text, ' ', sizeof(text));
    memcpy(text, "[adapter]\nopengl_flags = 5", 26);
    memcpy(text + 5000, "\nopengl_version = 9\n", 21);
    ck_assert_uint_eq(apply(text, &d), 1);
    ck_assert_uint_eq(d.OpenGlFlags, 0);
    ck_assert_uint_eq(d.OpenGlVersion, 9);
    /* a NUL inside a line */
    ck_assert_uint_eq(dxgk_config_apply_text(nul_text, sizeof(nul_text) - 1, "t", &soft_match, &d), 1);
    ck_assert(rec_wide_equals(d.UmdFileName[1], "ok.dll"));
    /* no text at all */
    ck_assert_uint_eq(dxgk_config_apply_text("", 0, "t", &soft_match, &d), 0);
}
END_TEST

START_TEST(env_overrides)
{
    KMT_ADAPTER_DESC d = empty_desc();

    quiet();
    set_wide(d.UmdFileName[KMTUMDVERSION_DX11], "from_file.dll");
    setenv("KMTSHIM_UMD_NAME", "/opt/umd/libumd.so", 1);
    setenv("KMTSHIM_OPENGL_ICD", "C:\\icd.dll", 1);
    setenv("KMTSHIM_OPENGL_VERSION", "0x2000", 1);
    setenv("KMTSHIM_OPENGL_FLAGS", "", 1);                          /* empty: unset */
    d.OpenGlFlags = 4;
    ck_assert_uint_eq(dxgk_config_apply_env(&d), 0);
    for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++)
        ck_assert(rec_wide_equals(d.UmdFileName[v], "/opt/umd/libumd.so"));
    ck_assert(rec_wide_equals(d.OpenGlIcdFileName, "C:\\icd.dll"));
    ck_assert_uint_eq(d.OpenGlVersion, 0x2000);
    ck_assert_uint_eq(d.OpenGlFlags, 4);
    setenv("KMTSHIM_OPENGL_FLAGS", "many", 1);
    setenv("KMTSHIM_UMD_NAME", "bad\xff", 1);
    ck_assert_uint_eq(dxgk_config_apply_env(&d), 2);
    ck_assert_uint_eq(d.OpenGlFlags, 4);
    ck_assert(rec_wide_equals(d.UmdFileName[0], "/opt/umd/libumd.so"));
}
END_TEST

/* ---- where the file is -------------------------------------------------------------- */

static char tmpdir[64];

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/kmt-config.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(path_search_order)
{
    char path[512], want[512], dir[300];
    bool etc = access("/etc/kmtshim/kmtshim.conf", R_OK) == 0;

    make_tmpdir();
    setenv("KMTSHIM_CONFIG", "/some/where.conf", 1);
    ck_assert(dxgk_config_path(path, sizeof(path)));
    ck_assert_str_eq(path, "/some/where.conf");
    setenv("KMTSHIM_CONFIG", "", 1);                                /* empty: no file at all */
    ck_assert(!dxgk_config_path(path, sizeof(path)));

    unsetenv("KMTSHIM_CONFIG");
    setenv("XDG_CONFIG_HOME", tmpdir, 1);
    snprintf(dir, sizeof(dir), "%s/kmtshim", tmpdir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(want, sizeof(want), "%s/kmtshim.conf", dir);
    write_file(want, "[adapter]\n");
    ck_assert(dxgk_config_path(path, sizeof(path)));
    ck_assert_str_eq(path, want);

    /* relative XDG_CONFIG_HOME: $HOME/.config */
    setenv("XDG_CONFIG_HOME", "relative", 1);
    setenv("HOME", tmpdir, 1);
    snprintf(dir, sizeof(dir), "%s/.config", tmpdir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(dir, sizeof(dir), "%s/.config/kmtshim", tmpdir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(want, sizeof(want), "%s/kmtshim.conf", dir);
    write_file(want, "[adapter]\n");
    ck_assert(dxgk_config_path(path, sizeof(path)));
    ck_assert_str_eq(path, want);
    unlink(want);
    rmdir(dir);

    /* neither: /etc, if it has one */
    ck_assert(dxgk_config_path(path, sizeof(path)) == etc);
    if (etc)
        ck_assert_str_eq(path, "/etc/kmtshim/kmtshim.conf");
    snprintf(path, sizeof(path), "%s/kmtshim/kmtshim.conf", tmpdir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/kmtshim", tmpdir);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/.config", tmpdir);
    rmdir(path);
    ck_assert_int_eq(rmdir(tmpdir), 0);
}
END_TEST

/* ---- QueryAdapterInfo answers from the configuration ------------------------------------ */

static NTSTATUS qai(D3DKMT_HANDLE adapter, KMTQUERYADAPTERINFOTYPE type, void *data, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { adapter, type, data, size };

    return D3DKMTQueryAdapterInfo(&q);
}

static NTSTATUS umd_name(D3DKMT_HANDLE adapter, KMTUMDVERSION version, D3DKMT_UMDFILENAMEINFO *info)
{
    memset(info, 0xcc, sizeof(*info));
    info->Version = version;
    return qai(adapter, KMTQAITYPE_UMDRIVERNAME, info, sizeof(*info));
}

static char conf_path[96];

/* Points KMTSHIM_CONFIG at a new file holding `text`. */
static void use_config(const char *text)
{
    make_tmpdir();
    snprintf(conf_path, sizeof(conf_path), "%s/kmtshim.conf", tmpdir);
    write_file(conf_path, text);
    setenv("KMTSHIM_CONFIG", conf_path, 1);
}

static void drop_config(void)
{
    unlink(conf_path);
    rmdir(tmpdir);
}

START_TEST(qai_soft_without_configuration_names_nothing)
{
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    setenv("KMTSHIM_CONFIG", "", 1);
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++)
        ck_assert_status(umd_name(adapter, v, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_OBJECT_NAME_NOT_FOUND);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_soft_answers_from_the_file)
{
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    use_config("[adapter miniport=soft]\n"
               "umd_dx9 = C:\\windows\\system32\\kmtumd9.dll\n"
               "opengl_icd = C:\\windows\\system32\\kmticd.dll\n"
               "opengl_version = 0x1100\n"
               "opengl_flags = 0x3\n"
               "[adapter miniport=drm]\n"
               "umd_dx10 = drm10.dll\n");
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX9, &name), STATUS_SUCCESS);
    ck_assert_uint_eq(name.Version, KMTUMDVERSION_DX9);
    ck_assert(rec_wide_equals(name.UmdFileName, "C:\\windows\\system32\\kmtumd9.dll"));
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX10, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    memset(&gl, 0xcc, sizeof(gl));
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(gl.UmdOpenGlIcdFileName, "C:\\windows\\system32\\kmticd.dll"));
    ck_assert_uint_eq(gl.Version, 0x1100);
    ck_assert_uint_eq(gl.Flags, 3);
    /* the sizes stay exact */
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl) - 1), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
    drop_config();
}
END_TEST

START_TEST(qai_soft_matched_by_pci_and_luid)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_UMDFILENAMEINFO name;
    char text[256];
    LUID luid;

    setenv("KMTSHIM_CONFIG", "", 1);
    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    luid = info[0].AdapterLuid;
    kmt_test_shutdown_no_leaks();

    /* read again at the next start: the LUID is stable */
    snprintf(text, sizeof(text),
             "[adapter pci=1414:008c]\numd_dx11 = by_pci.dll\n"
             "[adapter luid=%08x:%08x]\numd_dx12 = by_luid.dll\n"
             "[adapter luid=%08x:%08x]\numd_dx9 = other_luid.dll\n",
             (unsigned)luid.HighPart, (unsigned)luid.LowPart,
             (unsigned)luid.HighPart, (unsigned)luid.LowPart + 1);
    use_config(text);
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_int_eq(memcmp(&info[0].AdapterLuid, &luid, sizeof(luid)), 0);
    ck_assert_status(umd_name(info[0].hAdapter, KMTUMDVERSION_DX11, &name), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "by_pci.dll"));
    ck_assert_status(umd_name(info[0].hAdapter, KMTUMDVERSION_DX12, &name), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "by_luid.dll"));
    ck_assert_status(umd_name(info[0].hAdapter, KMTUMDVERSION_DX9, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    kmt_test_shutdown_no_leaks();
    drop_config();
}
END_TEST

START_TEST(qai_miniport_names_stay_the_default)
{
    struct record_config cfg;
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    /* record's own: DX11, DX12, an ICD (version 0x1100, flags 3) */
    use_config("[adapter miniport=record]\n"
               "umd_dx12 = C:\\override\\umd12.dll\n"
               "opengl_flags = 9\n"
               "[adapter miniport=soft]\n"
               "umd_dx11 = not_for_record.dll\n");
    record_default_config(&cfg);
    rec_use_config("record", &cfg);
    adapter = kmt_test_open_adapter();
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX11, &name), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "record_umd11.dll"));
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX12, &name), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "C:\\override\\umd12.dll"));
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX9, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(gl.UmdOpenGlIcdFileName, "record_icd.dll"));
    ck_assert_uint_eq(gl.Version, 0x1100);
    ck_assert_uint_eq(gl.Flags, 9);
    rec_finish();
    drop_config();
}
END_TEST

START_TEST(qai_configuration_clears_a_miniport_name)
{
    struct record_config cfg;
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    use_config("[adapter miniport=record]\numd_dx11 =\nopengl_icd = \"\"\n");
    record_default_config(&cfg);
    rec_use_config("record", &cfg);
    adapter = kmt_test_open_adapter();
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX11, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX12, &name), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "record_umd12.dll"));
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_OBJECT_NAME_NOT_FOUND);
    rec_finish();
    drop_config();
}
END_TEST

START_TEST(qai_environment_beats_the_file)
{
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    use_config("[adapter]\numd = from_file.dll\nopengl_icd = file_icd.dll\nopengl_version = 5\n");
    setenv("KMTSHIM_UMD_NAME", "Z:\\build\\reference_umd.dll", 1);
    setenv("KMTSHIM_OPENGL_ICD", "Z:\\build\\kmticd.dll", 1);
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++) {
        ck_assert_status(umd_name(adapter, v, &name), STATUS_SUCCESS);
        ck_assert(rec_wide_equals(name.UmdFileName, "Z:\\build\\reference_umd.dll"));
    }
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(gl.UmdOpenGlIcdFileName, "Z:\\build\\kmticd.dll"));
    ck_assert_uint_eq(gl.Version, 5);                               /* the file's: no override */
    kmt_test_shutdown_no_leaks();
    drop_config();
}
END_TEST

START_TEST(qai_bad_or_missing_file_changes_nothing)
{
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_HANDLE adapter;

    quiet();
    use_config("\x7f\x45\x4c\x46 binary garbage\n[adapter\numd_dx9 = x.dll\n");
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX9, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    kmt_test_shutdown_no_leaks();
    drop_config();

    setenv("KMTSHIM_CONFIG", "/nonexistent/kmtshim.conf", 1);
    adapter = kmt_test_open_adapter();
    ck_assert_status(umd_name(adapter, KMTUMDVERSION_DX9, &name), STATUS_OBJECT_NAME_NOT_FOUND);
    kmt_test_shutdown_no_leaks();
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *parse = tcase_create("parse");
    TCase *qaitc = tcase_create("qai");

    tcase_add_test(parse, parse_adapter_section_applies_to_every_adapter);
    tcase_add_test(parse, parse_every_key);
    tcase_add_test(parse, parse_umd_sets_all_versions_and_empty_clears);
    tcase_add_test(parse, parse_selectors);
    tcase_add_test(parse, parse_later_sections_override_earlier);
    tcase_add_test(parse, parse_blanks_comments_quotes_crlf);
    tcase_add_test(parse, parse_utf8_paths_become_utf16);
    tcase_add_test(parse, parse_bad_lines_are_counted_and_skipped);
    tcase_add_test(parse, parse_keys_after_a_bad_header_go_nowhere);
    tcase_add_test(parse, parse_limits);
    tcase_add_test(parse, env_overrides);
    tcase_add_test(parse, path_search_order);
    tcase_add_test(qaitc, qai_soft_without_configuration_names_nothing);
    tcase_add_test(qaitc, qai_soft_answers_from_the_file);
    tcase_add_test(qaitc, qai_soft_matched_by_pci_and_luid);
    tcase_add_test(qaitc, qai_miniport_names_stay_the_default);
    tcase_add_test(qaitc, qai_configuration_clears_a_miniport_name);
    tcase_add_test(qaitc, qai_environment_beats_the_file);
    tcase_add_test(qaitc, qai_bad_or_missing_file_changes_nothing);
    suite_add_tcase(s, parse);
    suite_add_tcase(s, qaitc);
    return s;
}

int main(void)
{
    return kmt_test_run(config_suite());
}
