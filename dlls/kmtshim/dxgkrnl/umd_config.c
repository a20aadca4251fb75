/*
 * The UMD / OpenGL ICD configuration file and its environment overrides
 * (see umd_config.h and docs/umd.md).
 *
 *     # comment (a line whose first non-blank character is # or ;)
 *     [adapter]                             every adapter
 *     umd_dx9 = C:\drivers\myumd.dll
 *     [adapter miniport=soft]               selectors must all match
 *     [adapter pci=1414:008c]               vendor:device, hex; device may be *
 *     [adapter luid=00000000:0f4b7d98]      HighPart:LowPart, hex
 *     umd = C:\drivers\all_versions.dll     umd_dx9 .. umd_dx12 at once
 *     umd_dx12 =                            empty: this adapter names none
 *     opengl_icd = "C:\gl\icd64.dll"        quotes keep blanks at the ends
 *     opengl_version = 0x1100
 *     opengl_flags = 3
 *
 * Matching sections apply in file order, so a later one overrides an
 * earlier one.  The text is parsed line by line straight into the adapter's
 * description: nothing is kept between adapters.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "umd_config.h"
#include "base/kmt_debug.h"

#define CONFIG_MAX_FILE (1u << 20)
#define CONFIG_MAX_LINE 4096u

/* ---- UTF-8 -> UTF-16 -------------------------------------------------------- */

/* Decodes one code point at s[*i]; false if the sequence is not valid UTF-8. */
static bool utf8_next(const unsigned char *s, size_t len, size_t *i, unsigned *cp)
{
    unsigned c = s[*i], need, min;

    if (c < 0x80) { *cp = c; (*i)++; return true; }
    if ((c & 0xe0) == 0xc0) { need = 1; min = 0x80; c &= 0x1f; }
    else if ((c & 0xf0) == 0xe0) { need = 2; min = 0x800; c &= 0x0f; }
    else if ((c & 0xf8) == 0xf0) { need = 3; min = 0x10000; c &= 0x07; }
    else return false;
    if (len - *i <= need)
        return false;
    for (unsigned k = 1; k <= need; k++) {
        if ((s[*i + k] & 0xc0) != 0x80)
            return false;
        c = (c << 6) | (s[*i + k] & 0x3f);
    }
    /* overlong forms, surrogates and values past Unicode are not characters */
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return false;
    *i += need + 1;
    *cp = c;
    return true;
}

bool dxgk_config_utf8_to_utf16(const char *s, size_t len, WCHAR *out, size_t cap)
{
    size_t i = 0, n = 0;
    unsigned cp;

    if (!cap)
        return false;
    while (i < len) {
        if (!utf8_next((const unsigned char *)s, len, &i, &cp) || !cp)
            return false;
        if (cp >= 0x10000) {
            if (n + 2 >= cap)
                return false;
            cp -= 0x10000;
            out[n++] = (WCHAR)(0xd800 | (cp >> 10));
            out[n++] = (WCHAR)(0xdc00 | (cp & 0x3ff));
        } else {
            if (n + 1 >= cap)
                return false;
            out[n++] = (WCHAR)cp;
        }
    }
    out[n] = 0;
    return true;
}

/* ---- small string helpers ---------------------------------------------------- */

struct span {
    const char *p;
    size_t n;
};

static struct span trim(struct span s)
{
    while (s.n && isspace((unsigned char)s.p[0])) { s.p++; s.n--; }
    while (s.n && isspace((unsigned char)s.p[s.n - 1])) s.n--;
    return s;
}

static bool span_is(struct span s, const char *word)
{
    return strlen(word) == s.n && !strncasecmp(s.p, word, s.n);
}

/* A whole span as an unsigned number (decimal, 0x hex or 0 octal). */
static bool parse_uint(struct span s, int base, UINT *out)
{
    char buf[32], *end;
    unsigned long long v;

    if (!s.n || s.n >= sizeof(buf) || s.p[0] == '-' || s.p[0] == '+')
        return false;
    memcpy(buf, s.p, s.n);
    buf[s.n] = 0;
    v = strtoull(buf, &end, base);
    if (*end || v > 0xffffffffull)
        return false;
    *out = (UINT)v;
    return true;
}

/* "A:B" as two hex numbers; B may be "*" when `wild` is given. */
static bool parse_pair(struct span s, UINT *a, UINT *b, bool *wild)
{
    const char *colon = memchr(s.p, ':', s.n);
    struct span left, right;

    if (!colon)
        return false;
    left = (struct span){ s.p, (size_t)(colon - s.p) };
    right = (struct span){ colon + 1, s.n - left.n - 1 };
    if (wild && span_is(right, "*")) {
        *wild = true;
        return parse_uint(left, 16, a);
    }
    return parse_uint(left, 16, a) && parse_uint(right, 16, b);
}

/* ---- section headers ---------------------------------------------------------------- */

/* One "name=value" selector of a section header: does the adapter match? */
static bool selector_matches(struct span sel, const struct dxgk_config_match *m, bool *ok)
{
    const char *eq = memchr(sel.p, '=', sel.n);
    struct span name, value;
    UINT a = 0, b = 0;
    bool wild = false;

    *ok = false;
    if (!eq)
        return false;
    name = trim((struct span){ sel.p, (size_t)(eq - sel.p) });
    value = trim((struct span){ eq + 1, sel.n - (size_t)(eq - sel.p) - 1 });
    if (span_is(name, "miniport")) {
        *ok = value.n > 0;
        return *ok && span_is(value, m->miniport ? m->miniport : "");
    }
    if (span_is(name, "pci")) {
        if (!(*ok = parse_pair(value, &a, &b, &wild)))
            return false;
        return a == m->vendor_id && (wild || b == m->device_id);
    }
    if (span_is(name, "luid")) {
        if (!(*ok = parse_pair(value, &a, &b, NULL)))
            return false;
        return a == (UINT)m->luid.HighPart && b == m->luid.LowPart;
    }
    return false;
}

/* "[adapter sel sel...]": false if malformed; *matches says whether it
 * selects this adapter. */
static bool parse_section(struct span line, const struct dxgk_config_match *m, bool *matches)
{
    struct span body;
    size_t i = 0;

    if (line.n < 2 || line.p[line.n - 1] != ']')
        return false;
    body = trim((struct span){ line.p + 1, line.n - 2 });
    while (i < body.n && !isspace((unsigned char)body.p[i]))
        i++;
    if (!span_is((struct span){ body.p, i }, "adapter"))
        return false;
    *matches = true;
    while (i < body.n) {
        size_t start;
        bool ok;

        while (i < body.n && isspace((unsigned char)body.p[i]))
            i++;
        start = i;
        while (i < body.n && !isspace((unsigned char)body.p[i]))
            i++;
        if (i == start)
            break;
        if (!selector_matches((struct span){ body.p + start, i - start }, m, &ok))
            *matches = false;
        if (!ok)
            return false;
    }
    return true;
}

/* ---- keys ------------------------------------------------------------------------------ */

static bool set_name(WCHAR *dst, struct span value)
{
    WCHAR tmp[MAX_PATH];

    if (!dxgk_config_utf8_to_utf16(value.p, value.n, tmp, MAX_PATH))
        return false;
    memcpy(dst, tmp, sizeof(tmp));
    return true;
}

static struct span unquote(struct span v)
{
    if (v.n >= 2 && v.p[0] == '"' && v.p[v.n - 1] == '"')
        return (struct span){ v.p + 1, v.n - 2 };
    return v;
}

/* Applies "key = value"; false for an unknown key or a bad value. */
static bool apply_key(struct span key, struct span value, KMT_ADAPTER_DESC *desc)
{
    static const char *const umd_keys[NUM_KMTUMDVERSIONS] = { "umd_dx9", "umd_dx10", "umd_dx11", "umd_dx12" };

    value = unquote(value);
    for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++)
        if (span_is(key, umd_keys[v]))
            return set_name(desc->UmdFileName[v], value);
    if (span_is(key, "umd")) {
        WCHAR name[MAX_PATH];

        if (!set_name(name, value))
            return false;
        for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++)
            memcpy(desc->UmdFileName[v], name, sizeof(name));
        return true;
    }
    if (span_is(key, "opengl_icd"))
        return set_name(desc->OpenGlIcdFileName, value);
    if (span_is(key, "opengl_version"))
        return parse_uint(value, 0, &desc->OpenGlVersion);
    if (span_is(key, "opengl_flags"))
        return parse_uint(value, 0, &desc->OpenGlFlags);
    return false;
}

/* ---- the text ------------------------------------------------------------------------------ */

enum section_state {
    SECTION_NONE,                        /* before the first header: keys belong nowhere */
    SECTION_BROKEN,                      /* after a bad header: its keys are dropped quietly */
    SECTION_SKIP,                        /* another adapter's: keys are checked, not applied */
    SECTION_APPLY,
};

static bool apply_line(struct span line, const struct dxgk_config_match *m, KMT_ADAPTER_DESC *desc,
                       enum section_state *state)
{
    KMT_ADAPTER_DESC scratch;
    const char *eq;
    bool matches = false;

    line = trim(line);
    if (!line.n || line.p[0] == '#' || line.p[0] == ';')
        return true;
    if (line.p[0] == '[') {
        if (!parse_section(line, m, &matches)) {
            *state = SECTION_BROKEN;     /* its keys must not land in the previous section */
            return false;
        }
        *state = matches ? SECTION_APPLY : SECTION_SKIP;
        return true;
    }
    if (*state == SECTION_BROKEN)
        return true;
    if (!(eq = memchr(line.p, '=', line.n)) || *state == SECTION_NONE)
        return false;
    /* the same checks whichever adapter reads the file */
    if (*state == SECTION_SKIP)
        desc = &scratch;
    return apply_key(trim((struct span){ line.p, (size_t)(eq - line.p) }),
                     trim((struct span){ eq + 1, line.n - (size_t)(eq - line.p) - 1 }), desc);
}

unsigned dxgk_config_apply_text(const char *text, size_t len, const char *origin,
                                const struct dxgk_config_match *match, KMT_ADAPTER_DESC *desc)
{
    enum section_state state = SECTION_NONE;
    unsigned problems = 0, lineno = 0;
    size_t pos = 0;

    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        struct span line = { text + pos, n };

        lineno++;
        pos += n + (nl ? 1 : 0);
        if (memchr(line.p, 0, line.n) || n > CONFIG_MAX_LINE || !apply_line(line, match, desc, &state)) {
            ERR_(dxgk, "%s:%u: ignored: not a section, a known key with a valid value, or a comment\n",
                 origin, lineno);
            problems++;
        }
    }
    return problems;
}

/* ---- the environment --------------------------------------------------------------------------- */

static unsigned env_name(const char *var, WCHAR *const *dst, unsigned count)
{
    const char *v = getenv(var);
    WCHAR name[MAX_PATH];

    if (!v || !*v)
        return 0;                        /* empty means unset */
    if (!dxgk_config_utf8_to_utf16(v, strlen(v), name, MAX_PATH)) {
        ERR_(dxgk, "%s ignored: not UTF-8, or longer than MAX_PATH\n", var);
        return 1;
    }
    for (unsigned i = 0; i < count; i++)
        memcpy(dst[i], name, sizeof(name));
    return 0;
}

static unsigned env_number(const char *var, ULONG *dst)
{
    const char *v = getenv(var);
    UINT n;

    if (!v || !*v)
        return 0;
    if (!parse_uint((struct span){ v, strlen(v) }, 0, &n)) {
        ERR_(dxgk, "%s=%s ignored: not a 32-bit number\n", var, v);
        return 1;
    }
    *dst = n;
    return 0;
}

unsigned dxgk_config_apply_env(KMT_ADAPTER_DESC *desc)
{
    WCHAR *umds[NUM_KMTUMDVERSIONS], *icd = desc->OpenGlIcdFileName;
    unsigned problems = 0;

    for (unsigned v = 0; v < NUM_KMTUMDVERSIONS; v++)
        umds[v] = desc->UmdFileName[v];
    problems += env_name("KMTSHIM_UMD_NAME", umds, NUM_KMTUMDVERSIONS);
    problems += env_name("KMTSHIM_OPENGL_ICD", &icd, 1);
    problems += env_number("KMTSHIM_OPENGL_VERSION", &desc->OpenGlVersion);
    problems += env_number("KMTSHIM_OPENGL_FLAGS", &desc->OpenGlFlags);
    return problems;
}

/* ---- the file ------------------------------------------------------------------------------------ */

static bool readable(const char *path)
{
    FILE *f = fopen(path, "re");

    if (f)
        fclose(f);
    return f != NULL;
}

bool dxgk_config_path(char *buf, size_t size)
{
    const char *explicit = getenv("KMTSHIM_CONFIG");
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    int n;

    if (explicit) {
        n = snprintf(buf, size, "%s", explicit);
        return *explicit && n > 0 && (size_t)n < size;
    }
    /* XDG: an unset or relative XDG_CONFIG_HOME means $HOME/.config */
    if (xdg && xdg[0] == '/')
        n = snprintf(buf, size, "%s/kmtshim/kmtshim.conf", xdg);
    else
        n = home && home[0] == '/' ? snprintf(buf, size, "%s/.config/kmtshim/kmtshim.conf", home) : -1;
    if (n > 0 && (size_t)n < size && readable(buf))
        return true;
    n = snprintf(buf, size, "%s", "/etc/kmtshim/kmtshim.conf");
    return (size_t)n < size && readable(buf);
}

/* Reads at most CONFIG_MAX_FILE bytes; NULL (with a message) on failure. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "re");
    char *text;

    if (!f) {
        ERR_(dxgk, "cannot read the configuration file %s\n", path);
        return NULL;
    }
    if (!(text = malloc(CONFIG_MAX_FILE + 1))) {
        fclose(f);
        return NULL;
    }
    *len = fread(text, 1, CONFIG_MAX_FILE + 1, f);
    fclose(f);
    if (*len > CONFIG_MAX_FILE) {
        ERR_(dxgk, "%s: larger than %u bytes, ignored\n", path, CONFIG_MAX_FILE);
        free(text);
        return NULL;
    }
    return text;
}

void dxgk_config_apply(KMT_ADAPTER_DESC *desc, const struct dxgk_config_match *match)
{
    char path[4096];
    size_t len = 0;
    char *text;

    if (dxgk_config_path(path, sizeof(path)) && (text = read_file(path, &len))) {
        TRACE_(dxgk, "%s: applying %s (%zu bytes)\n", match->miniport, path, len);
        dxgk_config_apply_text(text, len, path, match, desc);
        free(text);
    }
    dxgk_config_apply_env(desc);
}
