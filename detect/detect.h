/*
 * detect.h - the detection room: backends fill a struct cfapkg_machine,
 * select.c picks the GPU and names it from gpus.json.
 */
#ifndef CFA_DETECT_H
#define CFA_DETECT_H

#include <stdarg.h>

#include "core/compat.h"
#include "core/ctx.h"

/* Linux, or any OS given CFAPKG_SYSROOT: reads root/sys, root/proc, root/opt. */
enum cfapkg_err cfa_detect_sysfs(struct cfapkg_ctx *ctx, const char *root,
                                 struct cfapkg_machine *m);
/* Windows: DXGI, registry, System32, HIP SDK folders (platform/). */
enum cfapkg_err cfa_detect_windows(struct cfapkg_ctx *ctx, struct cfapkg_machine *m);

/* What a backend finds is held whole (allocated; the lists grow as they
 * fill).  Each of these returns false (NULL) when out of memory, which
 * ends detection in CFAPKG_E_NOMEM: the caller must look. */
bool cfa_machine_warn(struct cfapkg_machine *m, const char *fmt, ...) CFA_PRINTF(2, 3)
	CFA_MUST_USE;
bool cfa_machine_vwarn(struct cfapkg_machine *m, const char *fmt, va_list ap) CFA_PRINTF(2, 0)
	CFA_MUST_USE;
/* Sets a text field to the formatted text, freeing what it held. */
bool cfa_machine_setf(char **dst, const char *fmt, ...) CFA_PRINTF(2, 3) CFA_MUST_USE;
/* A name of cfapkg's own closed set ("kfd", "/opt") into its fixed field. */
#define CFA_MACHINE_NAME(field, name) cfa_machine_name((field), sizeof(field), (name))
void cfa_machine_name(char *dst, size_t len, const char *name);
/* Adds a GPU (index set, revision and status -1). */
struct cfapkg_gpu *cfa_machine_add_gpu(struct cfapkg_machine *m) CFA_MUST_USE;
/* A HIP runtime major once, with the file that shows it. */
bool cfa_machine_add_runtime(struct cfapkg_machine *m, unsigned major, const char *file)
	CFA_MUST_USE;
/* An SDK once per version; source is of the closed set CFA_MACHINE_NAME takes. */
bool cfa_machine_add_sdk(struct cfapkg_machine *m, const char *version, const char *path,
                         const char *source) CFA_MUST_USE;
/* "gfx" + major + minor and stepping as hex digits, from a KFD
 * gfx_target_version (120001 -> gfx1201) or HSA_OVERRIDE_GFX_VERSION
 * ("11.0.0" -> gfx1100).  False when it does not decode. */
bool cfa_gfx_from_kfd(unsigned long v, char out[16]);
bool cfa_gfx_from_override(const char *s, char out[16]);

/* hipinfo.c: the name, gcnArchName (its GPU target, without a full
 * target id's features) and totalGlobalMem of each device block of
 * hipInfo's output, in order, the text borrowed from it.  Returns how many
 * blocks there are; the first max of them are written to out. */
struct cfa_hipinfo_device {
	const char *name, *gfx;    /* in the text; not terminated */
	size_t name_len, gfx_len;
	uint64_t memory;
};
size_t cfa_hipinfo_parse(const char *text, struct cfa_hipinfo_device *out, size_t max);

/* windows.c: the Adrenalin release of a Windows DriverVersion, or NULL;
 * vendor, device and revision (-1 if absent) of a PCI hardware id. */
const char *cfa_adrenalin_of(const char *driver_version);
bool cfa_parse_hwid(const char *id, uint16_t *vendor, uint16_t *device, int *revision);

#endif
