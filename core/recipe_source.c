/*
 * recipe_source.c - a version's download for one platform, in one of
 * three shapes:
 *
 *   one archive      {"url", "sha256", "size", "format", ...}
 *   several          {"artifacts": [{"url", "sha256", "size", "format"}, ...]}
 *                    unpacked in order into one prefix (TheRock's tarballs)
 *   an APT source    {"apt": {"repository", "suite", "component", "arch",
 *                    "index_sha256", "index_size", "packages": ["NAME=VER"]}}
 *                    whose .debs are found in the pinned index at install,
 *                    or, with "signed_by" instead of the index's pins, in
 *                    the index that the repository's signed InRelease pins;
 *                    or whose "packages" pin each .deb themselves
 *                    ([{"name", "version", "file", "sha256", "size"}]):
 *                    then the .debs are the source's set of archives, and
 *                    a set whose members carry their Depends must be
 *                    closed (debclosure.c's cfa_deb_unmet)
 *
 * A source that cannot be fetched yet says why in "unavailable"; one that
 * can says in "provenance" where its pin was seen.
 */
#include <string.h>

#include "core/debindex.h"
#include "core/mem.h"
#include "core/pgpkey.h"
#include "core/recipe.h"
#include "core/strbuf.h"
#include "platform/platform.h"

static const char *const formats[] = {"zip", "7z", "tar.gz", "tar.xz", "tar.zst",
                                      "tar.bz2", "tar", "deb", NULL};
const char *const cfa_source_keys[] = {"url", "mirrors", "sha256", "size", "format",
                                       "strip", "unavailable", "unpacked_size",
                                       "max_size", "provenance", "artifacts", "apt", NULL};
const char *const cfa_artifact_keys[] = {"url", "mirrors", "sha256", "size", "format",
                                         "strip", NULL};
const char *const cfa_apt_keys[] = {"repository", "suite", "component", "arch", "index",
                                    "index_sha256", "index_size", "packages", "signed_by",
                                    "mirrors", "seen", NULL};
const char *const cfa_apt_signed_by_keys[] = {"fingerprint", "url", "keyring", NULL};
const char *const cfa_deb_pin_keys[] = {"name", "version", "file", "sha256", "size", "suite",
                                        "depends", "provides", NULL};

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* Only the web: a file:// URL or any other scheme in a recipe would read the
 * machine's own files on the recipe's say-so. */
static bool web_url(const char *url)
{
	return strncmp(url, "https://", 8) == 0 || strncmp(url, "http://", 7) == 0;
}

/* A recipe's downloads come over the network; a local mirror is a rule
 * of mirrors.conf, on the machine that uses it. */
static enum cfapkg_err check_mirrors(struct cfa_jr *jr, const char *const *mirrors, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!web_url(mirrors[i]))
			return cfa_jr_fail(jr, "mirrors[%lu] must start with https:// or http:// (a "
			                   "local mirror is a rule in mirrors.conf)", (unsigned long)i);
	return CFAPKG_E_OK;
}

/* SHA-256s are kept in lower case (the cache's file names), fingerprints
 * in upper case (as gpg prints them, so that messages match). */
static void hex_case(const char *s, bool upper)
{
	char *c = (char *)s; /* arena text the parser owns */

	for (; *c; c++)
		if (upper && *c >= 'a' && *c <= 'f')
			*c = (char)(*c - 'a' + 'A');
		else if (!upper && *c >= 'A' && *c <= 'F')
			*c = (char)(*c - 'A' + 'a');
}

static enum cfapkg_err check_format(struct cfa_jr *jr, const char *format)
{
	if (in_list(format, formats))
		return CFAPKG_E_OK;
	return cfa_jr_fail(jr, "format \"%s\" is not one of zip, 7z, tar.gz, tar.xz, tar.zst, "
	                   "tar.bz2, tar, deb", format);
}

static enum cfapkg_err check_sha(struct cfa_jr *jr, const char *key, const char *sha)
{
	if (sha && !cfa_valid_sha256(sha))
		return cfa_jr_fail(jr, "%s must be 64 hex digits", key);
	if (sha)
		hex_case(sha, false);
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_parse_artifact(struct cfa_jr *jr, const cJSON *o, void *elem, void *arg)
{
	struct cfapkg_artifact *a = elem;
	int64_t size = -1, strip = 0;
	enum cfapkg_err e;

	(void)arg;
	if ((e = cfa_jr_object(jr, o)) || (e = cfa_jr_keys(jr, o, cfa_artifact_keys)) ||
	    (e = cfa_jr_string(jr, o, "url", true, &a->url)) ||
	    (e = cfa_jr_strings(jr, o, "mirrors", &a->mirrors, &a->nmirrors)) ||
	    (e = cfa_jr_string(jr, o, "sha256", true, &a->sha256)) ||
	    (e = cfa_jr_int(jr, o, "size", 0, INT64_MAX, true, &size)) ||
	    (e = cfa_jr_string(jr, o, "format", true, &a->format)) ||
	    (e = cfa_jr_int(jr, o, "strip", 0, 16, false, &strip)) ||
	    (e = check_format(jr, a->format)) || (e = check_sha(jr, "sha256", a->sha256)))
		return e;
	if (!web_url(a->url))
		return cfa_jr_fail(jr, "url must start with https:// or http://");
	if ((e = check_mirrors(jr, a->mirrors, a->nmirrors)))
		return e;
	a->size = size;
	a->strip = (unsigned)strip;
	return CFAPKG_E_OK;
}

/* Every archive of a set is pinned: a set with one unknown member could
 * not be named in the store.  The sizes add up to the source's. */
static enum cfapkg_err parse_artifacts(struct cfa_jr *jr, const cJSON *o, struct cfapkg_source *s)
{
	enum cfapkg_err e;
	size_t i;

	if ((e = cfa_jr_array(jr, o, "artifacts", sizeof(*s->artifacts), true, cfa_parse_artifact, NULL,
	                      (void **)&s->artifacts, &s->nartifacts)))
		return e;
	s->size = 0;
	for (i = 0; i < s->nartifacts; i++)
		s->size += s->artifacts[i].size;
	/* The list was read as required and non-empty, so there is a first; the
	 * set is named by its first archive's format. */
	s->format = s->artifacts[0].format;
	return CFAPKG_E_OK;
}

/* "NAME=VERSION", as apt-get install spells a pinned package; a bare
 * "NAME" takes the newest version the index lists (an index that is
 * itself pinned or signed decides which .deb that is). */
static enum cfapkg_err check_packages(struct cfa_jr *jr, const struct cfapkg_apt_source *a)
{
	size_t i;

	if (a->npackages == 0)
		return cfa_jr_fail(jr, "packages must list at least one \"NAME=VERSION\"");
	for (i = 0; i < a->npackages; i++) {
		const char *eq = strchr(a->packages[i], '=');
		/* A bare name is allowed: the pinned or signed index then
		 * decides which .deb it is. */
		if (!eq && cfa_deb_name_valid(a->packages[i], strlen(a->packages[i])))
			continue;
		if (!eq || !cfa_deb_name_valid(a->packages[i], (size_t)(eq - a->packages[i])) ||
		    !cfa_deb_version_valid(eq + 1))
			return cfa_jr_fail(jr, "packages[%lu] \"%s\" is not NAME=VERSION with a version "
			                   "as Debian spells it (5.3.0+dfsg-2, 1:2.3-1), nor a package "
			                   "name alone", (unsigned long)i, a->packages[i]);
	}
	return CFAPKG_E_OK;
}

/* The repository's key, as apt's signed-by names it: a fingerprint with
 * the URL it is fetched from, or a keyring file of the system's (with a
 * fingerprint: only that key of it). */
static enum cfapkg_err parse_signed_by(struct cfa_jr *jr, const cJSON *apt,
                                       struct cfapkg_apt_source *a)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(apt, "signed_by");
	size_t mark = cfa_jr_push_key(jr, "signed_by");
	enum cfapkg_err e;

	if ((e = cfa_jr_object(jr, o)) || (e = cfa_jr_keys(jr, o, cfa_apt_signed_by_keys)) ||
	    (e = cfa_jr_string(jr, o, "fingerprint", false, &a->key_fingerprint)) ||
	    (e = cfa_jr_string(jr, o, "url", false, &a->key_url)) ||
	    (e = cfa_jr_string(jr, o, "keyring", false, &a->keyring)))
		return e;
	if (a->key_fingerprint && !cfa_pgp_fpr_valid(a->key_fingerprint))
		return cfa_jr_fail(jr, "fingerprint must be 40 or 64 hex digits, without spaces "
		                   "(gpg --show-keys KEYFILE prints it)");
	/* Exactly one of the two, so that there is one place the key comes
	 * from. */
	if (!a->key_url == !a->keyring)
		return cfa_jr_fail(jr, "needs either url (with fingerprint) or keyring");
	if (a->key_url && (!a->key_fingerprint || !web_url(a->key_url)))
		return cfa_jr_fail(jr, "url must start with https:// or http:// and needs "
		                   "fingerprint: the key is accepted only with that fingerprint");
	/* Absolute, as apt's own: a relative path would name another file in
	 * each folder cfapkg is run from. */
	if (a->keyring && a->keyring[0] != '/')
		return cfa_jr_fail(jr, "keyring must be an absolute path (as apt's signed-by: "
		                   "/usr/share/keyrings/debian-archive-keyring.gpg)");
	if (a->key_fingerprint)
		hex_case(a->key_fingerprint, true);
	cfa_jr_pop(jr, mark);
	return CFAPKG_E_OK;
}

/* A signed index needs a host that can check the signature and unpack
 * the .debs: on another system the source is planned, not installed. */
#define APT_LINUX_ONLY                                                                      \
	"APT sources are installed on Linux only (cfapkg checks the repository with gpgv and "   \
	"unpacks its .debs there); plan on Linux, or install this part on a Linux machine"

/* One pinned .deb: {"name", "version", "file", "sha256", "size", ...}. */
static enum cfapkg_err parse_pin(struct cfa_jr *jr, const cJSON *o, void *elem, void *arg)
{
	struct cfapkg_deb_pin *p = elem;
	enum cfapkg_err e;

	(void)arg;
	p->size = -1;
	if ((e = cfa_jr_object(jr, o)) || (e = cfa_jr_keys(jr, o, cfa_deb_pin_keys)) ||
	    (e = cfa_jr_string(jr, o, "name", true, &p->name)) ||
	    (e = cfa_jr_string(jr, o, "version", true, &p->version)) ||
	    (e = cfa_jr_string(jr, o, "file", true, &p->file)) ||
	    (e = cfa_jr_string(jr, o, "sha256", true, &p->sha256)) ||
	    (e = cfa_jr_int(jr, o, "size", 0, INT64_MAX, true, &p->size)) ||
	    (e = cfa_jr_string(jr, o, "suite", false, &p->suite)) ||
	    (e = cfa_jr_string(jr, o, "depends", false, &p->depends)) ||
	    (e = cfa_jr_string(jr, o, "provides", false, &p->provides)) ||
	    (e = check_sha(jr, "sha256", p->sha256)))
		return e;
	if (!cfa_deb_version_valid(p->version))
		return cfa_jr_fail(jr, "version \"%s\" is not a version as Debian spells it "
		                   "(5.3.0+dfsg-2, 1:2.3-1)", p->version);
	/* The file is joined to the repository's URL and to each mirror's, so
	 * it may not climb out of them. */
	if (!cfa_safe_relative(p->file))
		return cfa_jr_fail(jr, "file must be a path inside the repository (pool/main/...)");
	return CFAPKG_E_OK;
}

/* URL = base + "/" + file, in the arena. */
static const char *join_url(struct cfa_jr *jr, const char *base, const char *file)
{
	size_t n = strlen(base);
	char *url = cfa_aprintf("%s%s%s", base, n && base[n - 1] == '/' ? "" : "/", file);
	const char *kept = url ? cfa_arena_strdup(jr->arena, url) : NULL;

	cfa_free(url);
	return kept;
}

/* The pinned .debs as the source's set of archives: each from the
 * repository, then from each mirror, in that order. */
static enum cfapkg_err pins_to_artifacts(struct cfa_jr *jr, struct cfapkg_apt_source *a,
                                         struct cfapkg_source *s)
{
	struct cfapkg_artifact *arts = cfa_arena_alloc(jr->arena, a->npackages * sizeof(*arts));
	const char **names = cfa_arena_alloc(jr->arena, a->npackages * sizeof(*names));
	size_t i, k;

	if (!arts || !names)
		return cfa_nomem(jr->ctx);
	s->size = 0;
	for (i = 0; i < a->npackages; i++) {
		const struct cfapkg_deb_pin *p = &a->pins[i];
		const char **mirrors = cfa_arena_alloc(jr->arena, (a->nmirrors + 1) * sizeof(*mirrors));
		char *nv = cfa_aprintf("%s=%s", p->name, p->version);
		names[i] = nv ? cfa_arena_strdup(jr->arena, nv) : NULL;
		cfa_free(nv);
		arts[i].url = join_url(jr, a->repository, p->file);
		/* Each mirror serves the same file under its own base, so the
		 * pin's hash holds wherever the bytes come from. */
		for (k = 0; mirrors && k < a->nmirrors; k++)
			if (!(mirrors[k] = join_url(jr, a->mirrors[k], p->file)))
				mirrors = NULL;
		if (!names[i] || !arts[i].url || !mirrors)
			return cfa_nomem(jr->ctx);
		arts[i].mirrors = mirrors;
		arts[i].nmirrors = a->nmirrors;
		arts[i].sha256 = p->sha256;
		arts[i].size = p->size;
		arts[i].format = "deb";
		s->size += p->size;
	}
	a->packages = names;
	a->pinned = true;
	s->artifacts = arts;
	s->nartifacts = a->npackages;
	return CFAPKG_E_OK;
}

/* A set whose members carry their Depends must hold what they name. */
static enum cfapkg_err check_closed(struct cfa_jr *jr, const struct cfapkg_apt_source *a)
{
	char why[512], floor[128];

	if (cfa_deb_pins_closed(a->pins, a->npackages, "libc6", floor, sizeof(floor), why,
	                        sizeof(why)))
		return CFAPKG_E_OK;
	return cfa_jr_fail(jr, "%s: add the package to \"packages\" (cfapkg recipe deb-set "
	                   "reads the whole closure from the index)", why);
}

/* "packages": strings (the index form) or pins (the pinned form). */
static enum cfapkg_err parse_packages(struct cfa_jr *jr, const cJSON *o,
                                      struct cfapkg_apt_source *a, struct cfapkg_source *s)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "packages");
	enum cfapkg_err e;

	/* The first entry decides the form: strings are looked up in an index,
	 * objects are pins of their own. */
	if (!cJSON_IsArray(list) || !cJSON_IsObject(cJSON_GetArrayItem(list, 0)))
		return cfa_jr_strings(jr, o, "packages", &a->packages, &a->npackages);
	if ((e = cfa_jr_array(jr, o, "packages", sizeof(*a->pins), true, parse_pin, NULL,
	                      (void **)&a->pins, &a->npackages)) ||
	    (e = cfa_jr_strings(jr, o, "mirrors", &a->mirrors, &a->nmirrors)) ||
	    (e = check_mirrors(jr, a->mirrors, a->nmirrors)) || (e = check_closed(jr, a)))
		return e;
	return pins_to_artifacts(jr, a, s);
}

static enum cfapkg_err parse_apt(struct cfa_jr *jr, const cJSON *src, struct cfapkg_source *s)
{
	struct cfapkg_apt_source *a = cfa_arena_alloc(jr->arena, sizeof(*a));
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(src, "apt");
	size_t mark = cfa_jr_push_key(jr, "apt");
	enum cfapkg_err e;

	if (!a)
		return cfa_nomem(jr->ctx);
	memset(a, 0, sizeof(*a));
	a->index_size = -1;
	/* The default when the recipe names none: Debian's name for x86_64. */
	a->arch = "amd64";
	if ((e = cfa_jr_object(jr, o)) || (e = cfa_jr_keys(jr, o, cfa_apt_keys)) ||
	    (e = cfa_jr_string(jr, o, "repository", true, &a->repository)) ||
	    (e = cfa_jr_string(jr, o, "suite", true, &a->suite)) ||
	    (e = cfa_jr_string(jr, o, "component", true, &a->component)) ||
	    (e = cfa_jr_string(jr, o, "arch", false, &a->arch)) ||
	    (e = cfa_jr_string(jr, o, "index", false, &a->index)) ||
	    (e = cfa_jr_string(jr, o, "index_sha256", false, &a->index_sha256)) ||
	    (e = cfa_jr_int(jr, o, "index_size", 0, INT64_MAX, false, &a->index_size)) ||
	    (e = cfa_jr_string(jr, o, "seen", false, &a->seen)) ||
	    (e = parse_packages(jr, o, a, s)) ||
	    (e = check_sha(jr, "index_sha256", a->index_sha256)) || (e = check_packages(jr, a)))
		return e;
	if (!a->pins && (cJSON_HasObjectItem(o, "mirrors") || cJSON_HasObjectItem(o, "seen")))
		return cfa_jr_fail(jr, "mirrors and seen belong to packages pinned one by one; an "
		                   "index pin names the repository alone");
	if (!web_url(a->repository))
		return cfa_jr_fail(jr, "repository must start with https:// or http://");
	if (a->index && !cfa_safe_relative(a->index))
		return cfa_jr_fail(jr, "index must be a path inside the repository");
	if (cJSON_HasObjectItem(o, "signed_by") &&
	    ((e = parse_signed_by(jr, o, a)) ||
	     ((a->index_sha256 || a->index_size >= 0) &&
	      (e = cfa_jr_fail(jr, "pin the index (index_sha256, index_size) or name the key "
	                       "(signed_by), not both")))))
		return e;
	cfa_jr_pop(jr, mark);
	s->apt = a;
	s->format = "deb";
	if (!a->pins && (!a->index_sha256 || a->index_size < 0) && !a->key_fingerprint &&
	    !a->keyring && !s->unavailable)
		return cfa_jr_fail(jr, "an APT source without index_sha256 and index_size (or "
		                   "signed_by, or its packages pinned one by one) needs "
		                   "\"unavailable\": the reason (and the command that records them)");
	/* A recipe's own reason wins; on another system the source can still be
	 * planned, only not installed. */
	if (strcmp(cfa_plat_os(), "linux") != 0 && !s->unavailable)
		s->unavailable = APT_LINUX_ONLY;
	return CFAPKG_E_OK;
}

static enum cfapkg_err parse_single(struct cfa_jr *jr, const cJSON *o, struct cfapkg_source *s)
{
	enum cfapkg_err e;

	if ((e = cfa_jr_string(jr, o, "url", false, &s->url)) ||
	    (e = cfa_jr_strings(jr, o, "mirrors", &s->mirrors, &s->nmirrors)) ||
	    (e = cfa_jr_string(jr, o, "sha256", false, &s->sha256)) ||
	    (e = cfa_jr_int(jr, o, "size", 0, INT64_MAX, false, &s->size)) ||
	    (e = cfa_jr_string(jr, o, "format", true, &s->format)) ||
	    (e = check_format(jr, s->format)) || (e = check_sha(jr, "sha256", s->sha256)))
		return e;
	/* A download that cannot be verified is never offered without its
	 * reason: the user is told why it cannot be installed, not left to find
	 * out. */
	if ((!s->url || !s->sha256) && !s->unavailable)
		return cfa_jr_fail(jr, "a source without url or sha256 needs \"unavailable\": "
		                   "the reason it cannot be installed yet");
	if (s->url && !web_url(s->url))
		return cfa_jr_fail(jr, "url must start with https:// or http://");
	return check_mirrors(jr, s->mirrors, s->nmirrors);
}

/* As Nix's fetchurl: the SHA-256 decides what is accepted, and a download
 * without a recorded size is bounded by a cap instead (max_size, else the
 * default), its size learned when it arrives.  A cap beside a size would
 * never bind. */
static enum cfapkg_err parse_cap(struct cfa_jr *jr, const cJSON *o, struct cfapkg_source *s)
{
	enum cfapkg_err e = cfa_jr_int(jr, o, "max_size", 1, INT64_MAX, false, &s->max_size);

	if (!e && s->max_size > 0 && (s->size >= 0 || s->nartifacts || s->apt))
		return cfa_jr_fail(jr, "max_size bounds a download whose size is not recorded: "
		                   "leave it out where \"size\" is given (or for a set or an APT "
		                   "source, whose sizes are known)");
	return e;
}

/* One shape only: a download, a set of them, or an APT source. */
static enum cfapkg_err check_shape(struct cfa_jr *jr, const cJSON *o)
{
	bool one = cJSON_HasObjectItem(o, "url") || cJSON_HasObjectItem(o, "sha256") ||
	           cJSON_HasObjectItem(o, "format");
	int shapes = one + cJSON_HasObjectItem(o, "artifacts") + cJSON_HasObjectItem(o, "apt");

	if (shapes > 1)
		return cfa_jr_fail(jr, "a source is one download (url), a set (artifacts) or an "
		                   "APT source (apt), not several");
	return CFAPKG_E_OK;
}

enum cfapkg_err cfa_parse_source(struct cfa_jr *jr, const cJSON *o, struct cfapkg_source *s)
{
	int64_t strip = 0;
	enum cfapkg_err e;

	s->size = -1;
	s->unpacked_size = -1;
	s->max_size = -1;
	if ((e = cfa_jr_object(jr, o)) || (e = cfa_jr_keys(jr, o, cfa_source_keys)) ||
	    (e = check_shape(jr, o)) ||
	    (e = cfa_jr_string(jr, o, "unavailable", false, &s->unavailable)) ||
	    (e = cfa_jr_string(jr, o, "provenance", false, &s->provenance)) ||
	    (e = cfa_jr_int(jr, o, "strip", 0, 16, false, &strip)) ||
	    (e = cfa_jr_int(jr, o, "unpacked_size", 0, INT64_MAX, false, &s->unpacked_size)))
		return e;
	s->strip = (unsigned)strip;
	if (cJSON_HasObjectItem(o, "artifacts"))
		e = parse_artifacts(jr, o, s);
	else if (cJSON_HasObjectItem(o, "apt"))
		e = parse_apt(jr, o, s);
	else
		e = parse_single(jr, o, s);
	return e ? e : parse_cap(jr, o, s);
}

const char *cfapkg_format_from_url(const char *url)
{
	static const char *const ends[][2] = {
		{".tar.gz", "tar.gz"}, {".tgz", "tar.gz"},   {".tar.xz", "tar.xz"},
		{".txz", "tar.xz"},    {".tar.zst", "tar.zst"}, {".tzst", "tar.zst"},
		{".tar.bz2", "tar.bz2"}, {".tbz2", "tar.bz2"}, {".tar", "tar"},
		{".zip", "zip"},       {".7z", "7z"},         {".deb", "deb"}};
	/* The query and fragment are no part of the file's name; its end is
	 * compared without regard to case, as servers name files both ways. */
	size_t n = strcspn(url, "?#"), i, k, m;

	for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		m = strlen(ends[i][0]);
		for (k = 0; k < m && n >= m; k++) {
			char c = url[n - m + k];
			if ((c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c) != ends[i][0][k])
				break;
		}
		if (n >= m && k == m)
			return ends[i][1];
	}
	return NULL;
}
