/*
 * Configuration of the user-mode drivers an adapter names: what
 * QueryAdapterInfo(UMDRIVERNAME) and (UMOPENGLINFO) answer.  On Windows the
 * INF writes these into the registry; here a file and the environment do.
 * The miniport's own names are the default; docs/umd.md has the format.
 *
 *   file:  $KMTSHIM_CONFIG (empty: no file), else
 *          $XDG_CONFIG_HOME/kmtshim/kmtshim.conf ($HOME/.config when unset),
 *          else /etc/kmtshim/kmtshim.conf -- the first that exists
 *   environment (after the file, every adapter): KMTSHIM_UMD_NAME,
 *          KMTSHIM_OPENGL_ICD, KMTSHIM_OPENGL_VERSION, KMTSHIM_OPENGL_FLAGS
 */
#ifndef KMTSHIM_DXGK_UMD_CONFIG_H
#define KMTSHIM_DXGK_UMD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "kmtshim/d3dkmddi.h"

/* What a section header can select an adapter by. */
struct dxgk_config_match {
    const char *miniport;               /* "soft", "drm", a plugin's name */
    UINT vendor_id;
    UINT device_id;
    LUID luid;
};

/* Applies the file and then the environment to `desc`.  A bad file or line
 * is reported (err:dxgk) and skipped; this never fails. */
void dxgk_config_apply(KMT_ADAPTER_DESC *desc, const struct dxgk_config_match *match);

/* The steps, for tests.  Each returns how many lines or variables it had to
 * ignore.  `origin` names the text in messages. */
unsigned dxgk_config_apply_text(const char *text, size_t len, const char *origin,
                                const struct dxgk_config_match *match, KMT_ADAPTER_DESC *desc);
unsigned dxgk_config_apply_env(KMT_ADAPTER_DESC *desc);
/* The file dxgk_config_apply reads; false when there is none. */
bool dxgk_config_path(char *buf, size_t size);

/* UTF-8 -> NUL-terminated UTF-16 in out[cap]; false if invalid or too long. */
bool dxgk_config_utf8_to_utf16(const char *s, size_t len, WCHAR *out, size_t cap);

#endif /* KMTSHIM_DXGK_CONFIG_H */
