/*
 * viewlink.c - the bulk of making a generation: hard-linking a package's
 * files into its view folder (LibTorch's 8,000 headers are 8,000 links).
 *
 * The manifest lists files folder by folder, as the archive held them.
 * It is cut into a few contiguous slices linked from threads of their own;
 * within a slice each folder's source and target are opened once, so
 * that a link names the file by its last component only instead of the
 * kernel walking both dozen-component paths again.  Whatever cannot be
 * linked this way (another file system, a name already there, a folder
 * that cannot be made) is left undone for view.c's one-by-one path, which
 * falls back to symbolic links and copies and says what failed.
 */
#include <string.h>

#include "core/ctx.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "env/env.h"
#include "platform/platform.h"

#define MIN_SLICE 256 /* fewer files than this are not worth a thread */
#define MAX_SLICES 4  /* measured on two cores; more threads are untried */

struct slice {
	const char *store, *view;
	const char *const *paths;
	bool *done;
	size_t n, linked;
};

/* The source and target folders of the files under folder (len bytes of
 * a path; 0: the package's top), the target made first.  false when
 * either cannot be had: then the folder's files are left undone. */
static bool open_pair(const struct slice *s, const char *folder, size_t len,
                      struct cfa_dir **from, struct cfa_dir **to)
{
	/* The top is the store or view folder itself, with no separator. */
	char *src = cfa_aprintf("%s%s%.*s", s->store, len ? "/" : "", (int)len, folder);
	char *dst = cfa_aprintf("%s%s%.*s", s->view, len ? "/" : "", (int)len, folder);

	*from = *to = NULL;
	if (src && dst && cfa_plat_mkdir_p(dst) == 0) {
		*from = cfa_plat_dir_open(src);
		*to = cfa_plat_dir_open(dst);
	}
	cfa_free(src);
	cfa_free(dst);
	return *from && *to;
}

static void close_pair(struct cfa_dir *from, struct cfa_dir *to)
{
	cfa_plat_dir_close(from);
	cfa_plat_dir_close(to);
}

/* Links one slice's files.  from and to are always the folders of the last path
 * seen; a new pair is opened only when the folder changes, which the manifest's
 * folder-by-folder order makes rare.  A folder that cannot be opened leaves its
 * files undone for view.c to try one by one. */
static void link_slice(void *item)
{
	struct slice *s = item;
	struct cfa_dir *from = NULL, *to = NULL;
	const char *folder = NULL;
	size_t folder_len = 0, i;
	bool usable = false;

	for (i = 0; i < s->n; i++) {
		const char *path = s->paths[i], *slash = strrchr(path, '/');
		size_t len = slash ? (size_t)(slash - path) : 0;
		const char *name = slash ? slash + 1 : path;
		if (!folder || len != folder_len || memcmp(folder, path, len) != 0) {
			close_pair(from, to);
			folder = path;
			folder_len = len;
			usable = open_pair(s, path, len, &from, &to);
		}
		cfa_crash_point(); /* a kill may land while other slices link */
		if (usable && cfa_plat_hardlink_at(from, name, to, name) == 0) {
			s->done[i] = true;
			s->linked++;
		}
	}
	close_pair(from, to);
}

size_t cfa_view_link_many(const char *store, const char *view, const char *const *paths,
                          size_t n, bool *done)
{
	struct slice slices[MAX_SLICES];
	size_t nslices = cfa_plat_cpu_count(), per, i, linked = 0;

	if (n == 0)
		return 0;
	/* At most one slice per core, per MIN_SLICE files and MAX_SLICES in
	 * all, and always one. */
	if (nslices > MAX_SLICES)
		nslices = MAX_SLICES;
	if (nslices > n / MIN_SLICE)
		nslices = n / MIN_SLICE ? n / MIN_SLICE : 1;
	per = (n + nslices - 1) / nslices;
	for (i = 0; i < nslices; i++) {
		/* first is capped at n, so that per's rounding up can never
		 * make a slice start past the end: such a slice is empty
		 * instead. */
		size_t first = i * per < n ? i * per : n;
		slices[i] = (struct slice){store, view, paths + first, done + first,
		                           n - first < per ? n - first : per, 0};
	}
	/* Cleared before any thread starts; each slice writes only its own
	 * range of done, so the threads share nothing they write. */
	memset(done, 0, n * sizeof(*done));
	cfa_plat_parallel(link_slice, slices, sizeof(slices[0]), nslices);
	for (i = 0; i < nslices; i++)
		linked += slices[i].linked;
	return linked;
}
