/*
 * fetch_item.c - the two ends of one download that every fetch file
 * shares: its failure, kept as the item's first error, and its
 * publication, the verified .part renamed to the name its SHA-256 gives.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/fetch.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "platform/platform.h"

/* Out of memory, an item still says why it failed: this text, which
 * clearing never frees. */
static char no_memory[] = "out of memory";

static void drop_text(char **field)
{
	if (*field != no_memory)
		cfa_free(*field);
	*field = NULL;
}

/* The new text is made before the old one goes: it may quote it. */
static void set_error(struct cfapkg_fetch_item *it, const char *fmt, va_list ap)
{
	char *text = cfa_vaprintf(fmt, ap);

	drop_text(&it->error);
	it->error = text ? text : no_memory;
}

void cfa_item_error(struct cfapkg_fetch_item *it, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_error(it, fmt, ap);
	va_end(ap);
}

void cfa_item_tried(struct cfapkg_fetch_item *it, const char *fmt, ...)
{
	char *line, *all;
	va_list ap;

	va_start(ap, fmt);
	line = cfa_vaprintf(fmt, ap);
	va_end(ap);
	/* Out of memory the note is lost, not the download: it is only told. */
	if (!line)
		return;
	/* One line per URL given up; fail_item joins them for the context's
	 * single line. */
	all = it->tried ? cfa_aprintf("%s\n%s", it->tried, line) : line;
	if (all != line)
		cfa_free(line);
	if (all) {
		drop_text(&it->tried);
		it->tried = all;
	}
}

void cfapkg_fetch_item_clear(struct cfapkg_fetch_item *it)
{
	if (!it)
		return;
	drop_text(&it->error);
	drop_text(&it->tried);
	drop_text(&it->path);
	cfapkg_unpack_result_clear(&it->unpack);
}

void cfa_item_fail(struct xfer *x, enum cfapkg_err err, const char *fmt, ...)
{
	va_list ap;

	x->item->err = err;
	va_start(ap, fmt);
	set_error(x->item, fmt, ap);
	va_end(ap);
	x->done = true;
}

/* The part flushed to the disk, before it takes a name that says its
 * bytes are whole. */
static bool flush_part(struct xfer *x)
{
	/* Opened again by name: the transfer's own stream is closed by now.
	 * For writing, since Windows flushes a file only through a handle that
	 * may write to it. */
	FILE *f = cfa_plat_fopen(x->part_path, "rb+");
	int rc = f ? cfa_plat_fsync(f) : cfa_plat_write_errno();

	if (f)
		fclose(f);
	if (rc)
		cfa_item_fail(x, CFAPKG_E_IO, "%s: cannot write %s: %s", x->item->label, x->part_path,
		          cfa_plat_strerror(rc));
	return rc == 0;
}

/* The part takes the name its bytes give.  A file already there by that
 * name holds the same bytes (another URL of this run, or another process,
 * brought them first); Windows will not replace it while it is open, and
 * need not: this copy goes. */
static bool take_name(struct xfer *x, const char *final)
{
	if (cfa_plat_rename(x->part_path, final) == 0)
		return true;
	/* Only the size is compared: a file under a hash's name has that hash
	 * (fetch.c), so one of the right size is this artifact. */
	if (cfa_plat_file_size(final) != (long long)x->have)
		return false;
	cfa_plat_remove(x->part_path);
	return true;
}

/* Named SHA~BOOT and not flushed where the system has boot ids (see
 * cachefile.c), else flushed and named SHA. */
bool cfa_fetch_publish(struct xfer *x)
{
	struct cfapkg_fetch_item *it = x->item;
	/* NULL both where the system has no boot id and when out of memory:
	 * either way the part is flushed and named SHA. */
	char *final = cfa_cache_unsynced_name(x->final_dir, x->hex);
	bool flush = final == NULL, ok = false;

	x->deferred = false;
	if (flush && (!flush_part(x) || !(final = cfa_aprintf("%s/%s", x->final_dir, x->hex)))) {
		if (!it->err)
			cfa_item_fail(x, CFAPKG_E_NOMEM, "%s: out of memory", it->label);
	} else if (!final) {
		cfa_item_fail(x, CFAPKG_E_NOMEM, "%s: out of memory", it->label);
	} else if (!take_name(x, final)) {
		cfa_item_fail(x, CFAPKG_E_IO, "%s: cannot move the download into %s", it->label, final);
	} else {
		cfa_free(it->path);
		it->path = final;
		final = NULL;
		ok = true;
	}
	cfa_free(final);
	if (!ok)
		return false;
	/* The validator only served a resume: the bytes are whole now. */
	cfa_plat_remove(x->meta_path);
	/* The new name made durable too: the bytes were flushed before the
	 * rename, but a crash could still lose the rename itself. */
	if (flush)
		cfa_plat_sync_dir(x->final_dir);
	return true;
}
