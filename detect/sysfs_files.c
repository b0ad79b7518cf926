/*
 * sysfs_files.c - reading and listing below the detection root: paths are
 * built whole on the heap, files are read whole or not at all.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/strbuf.h"
#include "detect/sysfs.h"
#include "platform/platform.h"

/* Warnings go on the machine, not to a stream: the library never prints,
 * and the front end shows them with the result. */
void cfa_sys_warn(struct cfa_sys *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	s->nomem |= !cfa_machine_vwarn(s->m, fmt, ap);
	va_end(ap);
}

char *cfa_sys_path(struct cfa_sys *s, const char *fmt, ...)
{
	char *rel, *full = NULL;
	va_list ap;

	va_start(ap, fmt);
	rel = cfa_vaprintf(fmt, ap);
	va_end(ap);
	if (rel)
		/* The root is "" on a live machine and a fixture folder in
		 * tests: every absolute path read goes through here. */
		full = cfa_aprintf("%s%s", s->root, rel);
	cfa_free(rel);
	/* Sticky: callers test s->nomem once at the end rather than after
	 * every path. */
	s->nomem |= !full;
	return full;
}

int cfa_sys_read_quiet(const char *path, char *buf, size_t len)
{
	FILE *f = cfa_plat_fopen(path, "rb");
	size_t n;
	int err;

	/* C does not make fopen set errno; a missing file, the common case,
	 * stands in when it did not. */
	if (!f)
		return errno ? errno : ENOENT;
	/* sysfs files report a size of 4096 and procfs files 0, whatever they
	 * hold, so the size is not asked: the read itself shows whether the
	 * text fits. */
	n = fread(buf, 1, len - 1, f);
	/* A sysfs attribute can open and then fail to read, with the driver's
	 * error (EIO, or ENODEV for a device that went away). */
	err = ferror(f) ? (errno ? errno : EIO) : 0;
	/* A full buffer might be a cut value; one byte more tells.  A cut
	 * value would be read as another one, so it is an error. */
	if (!err && n == len - 1 && fgetc(f) != EOF)
		err = EFBIG;
	fclose(f);
	if (err)
		return err;
	buf[n] = '\0';
	/* sysfs and procfs values end with a newline; trailing blanks go with
	 * it. */
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int cfa_sys_read(struct cfa_sys *s, const char *path, char *buf, size_t len)
{
	int err = path ? cfa_sys_read_quiet(path, buf, len) : ENOMEM;

	/* A missing file is the normal answer on machines without the device
	 * or driver: only other failures are worth a warning. */
	if (err && err != ENOENT && path)
		cfa_sys_warn(s, "cannot read %s: %s", path,
		             err == EFBIG ? "larger than expected" : cfa_plat_strerror(err));
	return err;
}

int cfa_sys_read_rel(struct cfa_sys *s, const char *rel, char *buf, size_t len)
{
	char *path = cfa_sys_path(s, "%s", rel);
	int err = cfa_sys_read(s, path, buf, len);

	cfa_free(path);
	return err;
}

int cfa_sys_collect_name(const char *name, void *arg)
{
	struct cfa_names *ns = arg;
	char *copy;

	if (ns->prefix && strncmp(name, ns->prefix, strlen(ns->prefix)) != 0)
		return 0;
	if (cfa_grow((void **)&ns->items, &ns->cap, ns->n + 1, sizeof(*ns->items)) != 0 ||
	    !(copy = cfa_strdup(name)))
		/* Non-zero stops the listing; the names so far stay in ns for
		 * the caller to free. */
		return ENOMEM;
	ns->items[ns->n++] = copy;
	return 0;
}

/* Zeroed after, so a list can be freed twice or filled again. */
void cfa_sys_names_free(struct cfa_names *ns)
{
	size_t i;

	for (i = 0; i < ns->n; i++)
		cfa_free(ns->items[i]);
	cfa_free(ns->items);
	memset(ns, 0, sizeof(*ns));
}

/* Node folders are numbers: 2 before 10. */
int cfa_sys_cmp_numeric_name(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	uint64_t nx = 0, ny = 0;

	cfa_parse_u64(x, strlen(x), UINT64_MAX, &nx);
	cfa_parse_u64(y, strlen(y), UINT64_MAX, &ny);
	/* Names that are not numbers all read as 0 and fall back to text
	 * order among themselves. */
	return nx != ny ? (nx > ny) - (nx < ny) : strcmp(x, y);
}

/* Byte order, not the locale's: the same on every machine, so what is
 * listed, and the tests, do not depend on the environment. */
int cfa_sys_cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cfa_sys_list(struct cfa_sys *s, const char *path, struct cfa_names *ns,
                 int (*cmp)(const void *, const void *))
{
	int rc = path ? cfa_plat_list_dir(path, cfa_sys_collect_name, ns) : ENOMEM;

	s->nomem |= rc == ENOMEM;
	/* Windows reports every failure as ENOENT: tell a file or a locked
	 * folder from a missing one. */
	if (rc == ENOENT && cfa_plat_is_dir(path))
		rc = EACCES;
	else if (rc == ENOENT && cfa_plat_file_size(path) >= 0)
		rc = ENOTDIR;
	/* Sorted even after a failure, so whatever was listed is in a stable
	 * order. */
	if (ns->n)
		qsort(ns->items, ns->n, sizeof(*ns->items), cmp);
	return rc;
}

int cfa_sys_list_rel(struct cfa_sys *s, const char *rel, struct cfa_names *ns,
                     int (*cmp)(const void *, const void *))
{
	char *path = cfa_sys_path(s, "%s", rel);
	int rc = cfa_sys_list(s, path, ns, cmp);

	cfa_free(path);
	return rc;
}
