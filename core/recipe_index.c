/*
 * recipe_index.c - a recipe folder's names as a libsolv repository, and
 * its cache: one file per folder, a text line that says what it was built
 * from, then libsolv's own solv data (repo_write, repo_add_solv).
 *
 * The line is "cfapkg-recipe-index 1 VERSION KEY DIGEST LENGTH": the
 * format, the cfapkg that wrote it, the key of the folder's files
 * (cfa_recipe_index_key), and the checksum and length of the solv data.  A
 * cache is used only when all of it matches: it is never trusted further
 * than the files it was made from.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <solv/repo_solv.h>
#include <solv/repo_write.h>

#include "core/atomic_file.h"
#include "core/cache_key.h"
#include "core/dep.h"
#include "core/image_format.h"
#include "core/mem.h"
#include "core/recipe.h"
#include "core/recipe_index.h"
#include "core/strbuf.h"
#include "platform/platform.h"

#define INDEX_MAGIC "cfapkg-recipe-index"
/* 3: the payload's checksum is the images' (16 hex digits), no longer a
 * SHA-256 of it. */
#define INDEX_FORMAT 3
/* Far more than the 20 bytes a recipe's entry takes: a larger length in
 * a header is damage, not a folder. */
#define INDEX_MAX_BYTES (1u << 30)

static void add_name(Repo *repo, Offset *list, const char *name)
{
	*list = repo_addid_dep(repo, *list, pool_str2id(repo->pool, name, 1), 0);
}

static void add_platform(Repo *repo, Offset *list, const char *os, const char *arch)
{
	char mark[CFA_NAME_MAX * 2 + 16];

	if (cfa_snprintf(mark, sizeof(mark), "%s%s-%s", CFA_INDEX_ON, os, arch))
		add_name(repo, list, mark);
}

/* Where version v can be installed, as the pool's OS marker rules
 * (solver/pool.c): a package where it has a download and its os and arch
 * lists allow it, another kind wherever its lists allow ("*": any). */
static void add_platforms(Repo *repo, Offset *list, const struct cfapkg_recipe *r,
                          const struct cfapkg_version *v)
{
	size_t i, k;

	for (i = 0; r->kind == CFAPKG_KIND_PACKAGE && i < v->nsources; i++) {
		const char *p = v->sources[i].platform, *dash = strchr(p, '-');
		char os[CFA_NAME_MAX];
		/* Platforms are spelt "OS-ARCH"; an OS name holds no '-'. */
		if (!dash || (size_t)(dash - p) >= sizeof(os))
			continue;
		memcpy(os, p, (size_t)(dash - p));
		os[dash - p] = '\0';
		if ((v->nos == 0 || cfa_in_list(os, v->os, v->nos)) &&
		    (v->narch == 0 || cfa_in_list(dash + 1, v->arch, v->narch)))
			add_platform(repo, list, os, dash + 1);
	}
	if (r->kind == CFAPKG_KIND_PACKAGE)
		return;
	for (i = 0; i < (v->nos ? v->nos : 1); i++)
		for (k = 0; k < (v->narch ? v->narch : 1); k++)
			add_platform(repo, list, v->nos ? v->os[i] : "*", v->narch ? v->arch[k] : "*");
}

static void add_recipe(Repo *repo, const struct cfapkg_recipe *r)
{
	Solvable *s = pool_id2solvable(repo->pool, repo_add_solvable(repo));
	size_t i, k;

	s->name = pool_str2id(repo->pool, r->name, 1);
	s->evr = ID_EMPTY;
	s->arch = ARCH_NOARCH;
	add_name(repo, &s->provides, r->name);
	if (r->kind == CFAPKG_KIND_SYSTEM || r->nnotes)
		add_name(repo, &s->provides, CFA_INDEX_ALWAYS);
	/* The walk from a request follows every version, not only the one a
	 * solve will pick (as solver/closure.c does on the parsed set). */
	for (i = 0; i < r->nversions; i++) {
		const struct cfapkg_version *v = &r->versions[i];
		for (k = 0; k < v->nprovides; k++)
			add_name(repo, &s->provides, v->provides[k].name);
		for (k = 0; k < v->nrequires; k++)
			add_name(repo, &s->requires, v->requires[k].name);
		add_platforms(repo, &s->provides, r, v);
	}
}

void cfa_recipe_index_add(Repo *repo, struct cfapkg_recipe *const *recipes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		add_recipe(repo, recipes[i]);
}

Repo *cfa_recipe_index_build(Pool *pool, struct cfapkg_recipe *const *recipes, size_t n)
{
	Repo *repo = repo_create(pool, "recipes");

	cfa_recipe_index_add(repo, recipes, n);
	repo_internalize(repo);
	return repo;
}

enum cfapkg_err cfa_recipe_index_key(struct cfapkg_ctx *ctx, const char *dir, char *const *names,
                                     size_t n, char key[65], bool *keyed)
{
	struct cfa_key k;
	struct cfa_buf path;
	char stamp[64];
	size_t i, keep;

	*keyed = true;
	cfa_key_start(&k);
	cfa_key_add(&k, dir, strlen(dir) + 1);
	/* One path, "DIR/" kept and each name put after it. */
	cfa_buf_init(&path, (size_t)64 << 10);
	cfa_buf_adds(&path, dir);
	cfa_buf_adds(&path, "/");
	keep = path.len;
	for (i = 0; i < n && *keyed; i++) {
		cfa_buf_cut(&path, keep);
		if (!cfa_buf_adds(&path, names[i])) {
			cfa_buf_fini(&path);
			return cfa_nomem(ctx);
		}
		/* Name and stamp, each with its terminator, so that no two
		 * listings hash alike by running into each other. */
		if ((*keyed = cfa_plat_file_stamp(path.data, stamp))) {
			cfa_key_add(&k, names[i], strlen(names[i]) + 1);
			cfa_key_add(&k, stamp, strlen(stamp) + 1);
		}
	}
	cfa_buf_fini(&path);
	cfa_key_hex(&k, key);
	return CFAPKG_E_OK;
}

/* The header this cfapkg writes for key, up to the digest. */
static bool header_prefix(char *buf, size_t len, const char key[65])
{
	return cfa_snprintf(buf, len, "%s %d %s %s ", INDEX_MAGIC, INDEX_FORMAT,
	                    cfapkg_version_string(), key);
}

/* Reads "SUM LENGTH\n" after the prefix; false for anything else. */
static bool header_rest(const char *rest, uint64_t *sum, uint64_t *len)
{
	size_t n = strlen(rest);

	return n >= 16 + 3 && rest[16] == ' ' && rest[n - 1] == '\n' &&
	       cfa_parse_hex(rest, 16, UINT64_MAX, sum) &&
	       cfa_parse_u64(rest + 17, n - 18, INDEX_MAX_BYTES, len);
}

/* Whether the len bytes from f's position sum to sum.  The images'
 * checksum, not a SHA-256: what it guards against is damage (a torn
 * disk, a file cut short), and a plan reads every folder's index through
 * it, where a SHA-256 was a twentieth of a no-op install's instructions. */
static bool payload_whole(FILE *f, uint64_t len, uint64_t sum)
{
	/* Small: every page of stack a command reaches is a fresh page, and
	 * a plan reads each folder's index this way.  A multiple of 8, so
	 * that the words summed run on from one read to the next. */
	unsigned char buf[4096];
	uint64_t left = len, h = FNV_START;

	while (left > 0) {
		size_t want = left < sizeof(buf) ? (size_t)left : sizeof(buf);
		if (fread(buf, 1, want, f) != want)
			break;
		h = cfa_image_checksum(buf, want, h);
		left -= want;
	}
	/* Nothing may follow the data: a longer file is not the one the
	 * header describes. */
	return left == 0 && fgetc(f) == EOF && h == sum;
}

bool cfa_recipe_index_whole(const char *path, const char key[65])
{
	FILE *f = cfa_plat_fopen(path, "rb");
	char line[512], want[256];
	uint64_t len = 0, sum = 0;
	size_t plen;
	bool whole;

	if (!f)
		return false;
	whole = header_prefix(want, sizeof(want), key) && fgets(line, sizeof(line), f) &&
	        strncmp(line, want, (plen = strlen(want))) == 0 &&
	        header_rest(line + plen, &sum, &len) && payload_whole(f, len, sum);
	fclose(f);
	return whole;
}

Repo *cfa_recipe_index_read(Pool *pool, const char *path, const char key[65])
{
	FILE *f = cfa_plat_fopen(path, "rb");
	char line[512], want[256];
	uint64_t len = 0, sum = 0;
	size_t plen;
	long start;
	Repo *repo = NULL;

	if (!f)
		return NULL;
	if (header_prefix(want, sizeof(want), key) && fgets(line, sizeof(line), f) &&
	    strncmp(line, want, (plen = strlen(want))) == 0 &&
	    header_rest(line + plen, &sum, &len) && (start = ftell(f)) >= 0 &&
	    payload_whole(f, len, sum) && fseek(f, start, SEEK_SET) == 0) {
		repo = repo_create(pool, "recipes");
		/* Checked whole above, so a failure here is a cache of another
		 * libsolv: dropped like any other mismatch. */
		if (repo_add_solv(repo, f, 0) != 0) {
			repo_free(repo, 1);
			repo = NULL;
		}
	}
	fclose(f);
	return repo;
}

/* The solv data of repo as libsolv writes it, in memory (NULL with
 * *nomem false: libsolv or the scratch file failed).  It goes through a
 * scratch file beside the cache, as repo_write needs a FILE. */
static char *solv_bytes(Repo *repo, const char *scratch, size_t *len, bool *nomem)
{
	FILE *f = cfa_plat_fopen(scratch, "w+b");
	char *data = NULL;
	long size = 0;

	if (!f)
		return NULL;
	if (repo_write(repo, f) == 0 && fflush(f) == 0 && (size = ftell(f)) > 0 &&
	    (uint64_t)size < INDEX_MAX_BYTES && fseek(f, 0, SEEK_SET) == 0)
		*nomem = !(data = cfa_malloc((size_t)size));
	if (data && fread(data, 1, (size_t)size, f) == (size_t)size)
		*len = (size_t)size;
	else {
		cfa_free(data);
		data = NULL;
	}
	fclose(f);
	cfa_plat_remove(scratch);
	return data;
}

/* The header line for the solv data. */
static bool header_line(char *head, size_t size, const char key[65], const char *data,
                        size_t len)
{
	uint64_t sum = cfa_image_checksum((const unsigned char *)data, len, FNV_START);
	size_t hlen;

	if (!header_prefix(head, size, key))
		return false;
	hlen = strlen(head);
	return cfa_snprintf(head + hlen, size - hlen, "%016llx %llu\n", (unsigned long long)sum,
	                    (unsigned long long)len);
}

enum cfapkg_err cfa_recipe_index_write(struct cfapkg_ctx *ctx, Repo *repo, const char *path,
                                       const char key[65])
{
	char *scratch = cfa_aprintf("%s.part", path), *data = NULL, *file = NULL, head[256];
	size_t len = 0, hlen;
	bool nomem = !scratch;
	enum cfapkg_err e = CFAPKG_E_OK;

	if (scratch && (data = solv_bytes(repo, scratch, &len, &nomem)) &&
	    header_line(head, sizeof(head), key, data, len) &&
	    !(nomem = !(file = cfa_malloc((hlen = strlen(head)) + len)))) {
		memcpy(file, head, hlen);
		memcpy(file + hlen, data, len);
		/* A cache only saves time: a full disk or a read-only root
		 * means the next command builds it again. */
		if ((e = cfa_write_atomic(ctx, path, file, hlen + len)) != CFAPKG_E_NOMEM) {
			cfapkg_ctx_clear_error(ctx);
			e = CFAPKG_E_OK;
		}
	}
	cfa_free(file);
	cfa_free(data);
	cfa_free(scratch);
	return nomem ? cfa_nomem(ctx) : e;
}
