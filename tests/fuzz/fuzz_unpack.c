/*
 * fuzz_unpack.c - the unpacker (cache/unpack*.c, cache/tree.c,
 * cache/stream.c) on the input written to a file: a zip when it starts
 * with "PK", a deb when it starts with "!<arch>", else tar.gz (libarchive
 * finds the real format and filter itself).  Each input is unpacked from
 * the file (cfapkg_unpack) and again front to back as a download would be
 * (cfa_stream_*), into a root two folders below a scratch folder, at most
 * 1 MiB.  Properties:
 *   - nothing appears beside the root or its parents, nothing but the
 *     store inside it, and a refusal leaves no staging folder behind;
 *   - what lands in the store holds only folders, files and symbolic
 *     links, no set-id or sticky bits, and every symbolic link resolves
 *     (as the kernel would, through the others) inside the store folder;
 *   - the streamed unpack never accepts what the file unpack refuses, and
 *     when both accept they write the same manifest.
 */
#define _XOPEN_SOURCE 700 /* lstat, readlink */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/cache.h"
#include "platform/platform.h"
#include "tests/fuzz/fuzz.h"

#define MAX_BYTES (1u << 20)
#define MAX_HOPS 40

static char archive[1024], parent[1024], grandparent[1024], root[1024], store[1024],
	unpacked[1024];

/* Folder dir holds exactly the names given (NULL-terminated). */
static void check_only(const char *dir, const char *const *names)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t want = 0, seen = 0, i;

	while (names[want])
		want++;
	FUZZ_CHECK(d || want == 0, "%s is gone", dir);
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		for (i = 0; i < want && strcmp(names[i], e->d_name) != 0; i++)
			;
		FUZZ_CHECK(i < want, "%s/%s was created", dir, e->d_name);
		seen++;
	}
	if (d)
		closedir(d);
	FUZZ_CHECK(seen == want, "%s holds %zu of its %zu entries", dir, seen, want);
}

static void check_surroundings(bool unpacked_ok)
{
	static const char *const scratch_names[] = {"input", "a", NULL}, *const a[] = {"b", NULL},
	                         *const b[] = {"root", NULL}, *const in_root[] = {"store", NULL},
	                         *const ok[] = {"pkg", NULL}, *const none[] = {NULL};

	check_only(fuzz_scratch(), scratch_names);
	check_only(grandparent, a);
	check_only(parent, b);
	check_only(root, in_root);
	check_only(store, unpacked_ok ? ok : none);
}

/* Where a link in folder rel_dir (below the store folder) with text
 * target leads, following links the way the kernel does; false when it
 * leaves the store folder or loops.  Names that do not exist are taken as
 * written. */
static bool resolves_inside(const char *rel_dir, const char *target)
{
	char at[4096], todo[8192], rest[8192], full[8192], comp[4096], link[4096];
	unsigned hops = 0;
	struct stat st;

	if (target[0] == '/' || !cfa_snprintf(at, sizeof(at), "%s", rel_dir) ||
	    !cfa_snprintf(todo, sizeof(todo), "%s", target))
		return false;
	while (todo[0]) {
		size_t n = strcspn(todo, "/");
		ssize_t len;
		if (!cfa_snprintf(comp, sizeof(comp), "%.*s", (int)n, todo) ||
		    !cfa_snprintf(rest, sizeof(rest), "%s", todo + n + (todo[n] == '/')))
			return false;
		memcpy(todo, rest, strlen(rest) + 1);
		if (n == 0 || strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *slash = strrchr(at, '/');
			if (!at[0])
				return false; /* above the store folder */
			*(slash ? slash : at) = '\0';
			continue;
		}
		if (!cfa_snprintf(full, sizeof(full), "%s/%s%s%s", unpacked, at, at[0] ? "/" : "", comp))
			return false;
		if (lstat(full, &st) == 0 && S_ISLNK(st.st_mode)) {
			if (++hops > MAX_HOPS || (len = readlink(full, link, sizeof(link) - 1)) < 0)
				return false;
			link[len] = '\0';
			if (link[0] == '/' ||
			    !cfa_snprintf(todo, sizeof(todo), "%s%s%s", link, rest[0] ? "/" : "", rest))
				return false;
			continue;
		}
		if (!cfa_snprintf(at + strlen(at), sizeof(at) - strlen(at), "%s%s", at[0] ? "/" : "",
		                 comp))
			return false;
	}
	return true;
}

/* Walks the store folder: kinds, bits and links (rel: path below it). */
static void check_store(const char *rel)
{
	char dir[4096], path[8192], sub[4096], target[4096];
	struct dirent *e;
	struct stat st;
	DIR *d;

	FUZZ_CHECK(cfa_snprintf(dir, sizeof(dir), "%s%s%s", unpacked, rel[0] ? "/" : "", rel),
	           "path too long: %s", rel);
	d = opendir(dir);
	FUZZ_CHECK(d != NULL, "cannot list %s", dir);
	while ((e = readdir(d))) {
		ssize_t len;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		FUZZ_CHECK(cfa_snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) &&
		               cfa_snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "",
		                           e->d_name),
		           "path too long: %s/%s", rel, e->d_name);
		FUZZ_CHECK(lstat(path, &st) == 0, "cannot stat %s", path);
		FUZZ_CHECK(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode),
		           "%s is neither a folder, a file nor a link", sub);
		FUZZ_CHECK(S_ISLNK(st.st_mode) || (st.st_mode & 07000) == 0,
		           "%s has mode %04o", sub, (unsigned)st.st_mode & 07777);
		if (S_ISDIR(st.st_mode)) {
			check_store(sub);
		} else if (S_ISLNK(st.st_mode)) {
			len = readlink(path, target, sizeof(target) - 1);
			FUZZ_CHECK(len >= 0, "cannot read link %s", sub);
			target[len] = '\0';
			FUZZ_CHECK(resolves_inside(rel, target),
			           "link %s -> %s leads out of the store folder", sub, target);
		}
	}
	closedir(d);
}

/* The manifest of what was unpacked (malloc'd), or NULL. */
static char *manifest(void)
{
	char path[2048];
	FILE *f;
	char *text;
	long n;

	snprintf(path, sizeof(path), "%s/.cfapkg/manifest.json", unpacked);
	f = fopen(path, "rb");
	FUZZ_CHECK(f != NULL, "no manifest in %s", unpacked);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = malloc((size_t)n + 1);
	FUZZ_CHECK(text && fread(text, 1, (size_t)n, f) == (size_t)n, "cannot read %s", path);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* After one unpack: the properties, then the store emptied for the next
 * (the store folder itself stays, so that every unpack starts alike). */
static char *settle(enum cfapkg_err e)
{
	char *text = NULL;

	check_surroundings(e == CFAPKG_E_OK);
	if (!e) {
		check_store("");
		text = manifest();
	}
	if (cfa_plat_remove_tree(store) || cfa_plat_mkdir_p(store))
		fuzz_fail("cannot empty %s", store);
	return text;
}

static enum cfapkg_err unpack_streamed(struct cfapkg_ctx *ctx, const char *format, size_t size,
                                       const struct cfapkg_unpack_opts *opts)
{
	struct cfapkg_unpack_result res;
	struct cfa_stream *s = NULL;
	enum cfapkg_err e;

	if (cfa_stream_start(ctx, format, "pkg", opts, size, archive, &s))
		return CFAPKG_E_UNSUPPORTED;
	cfa_stream_feed(s, size, true);
	e = cfa_stream_finish(s, true, archive, false, &res);
	cfapkg_unpack_result_clear(&res);
	return e;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_path(archive, sizeof(archive), "input");
	fuzz_path(grandparent, sizeof(grandparent), "a");
	fuzz_path(parent, sizeof(parent), "a/b");
	fuzz_path(root, sizeof(root), "a/b/root");
	fuzz_path(store, sizeof(store), "a/b/root/store");
	fuzz_path(unpacked, sizeof(unpacked), "a/b/root/store/pkg");
	if (cfa_plat_mkdir_p(store))
		fuzz_fail("cannot make %s", store);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfapkg_ctx *ctx = cfapkg_ctx_new();
	struct cfapkg_unpack_opts opts;
	struct cfapkg_unpack_result res;
	const char *format = "tar.gz";
	enum cfapkg_err e, es;
	char *from_file, *streamed, *why;

	if (size >= 2 && memcmp(data, "PK", 2) == 0)
		format = "zip";
	else if (size >= 7 && memcmp(data, "!<arch>", 7) == 0)
		format = "deb";
	memset(&opts, 0, sizeof(opts));
	opts.max_bytes = MAX_BYTES;
	/* As for every pinned download: the SHA-256 stands in for zip CRCs,
	 * which is also what the streamed unpack assumes. */
	opts.hash_checked = true;
	opts.label = "fuzz input";
	fuzz_write(archive, data, size);
	cfapkg_ctx_set_root(ctx, root);
	e = cfapkg_unpack(ctx, archive, format, "pkg", &opts, &res);
	cfapkg_unpack_result_clear(&res);
	from_file = settle(e);
	/* The whole refusal: the message may be longer than any buffer. */
	why = strdup(cfapkg_ctx_error(ctx));
	FUZZ_CHECK(why != NULL, "out of memory");
	cfapkg_ctx_clear_error(ctx);
	es = unpack_streamed(ctx, format, size, &opts);
	streamed = settle(es);
	FUZZ_CHECK(e == CFAPKG_E_OK || es != CFAPKG_E_OK,
	           "the streamed unpack accepted what the file unpack refused (%s)", why);
	FUZZ_CHECK(!from_file || !streamed || strcmp(from_file, streamed) == 0,
	           "the two unpacks disagree:\n%s\n---\n%s", from_file, streamed);
	free(why);
	free(from_file);
	free(streamed);
	cfapkg_ctx_free(ctx);
	return 0;
}
