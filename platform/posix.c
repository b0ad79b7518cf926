/*
 * posix.c - the platform seam on Linux and other POSIX systems.
 */
#define _GNU_SOURCE /* syncfs */
#include "platform/platform.h"

#include <dirent.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

const char *cfa_plat_os(void)
{
	return "linux";
}

const char *cfa_plat_arch(void)
{
	static struct utsname u;
	static int done;

	if (!done) {
		/* The BSDs say amd64 for what Linux and the recipes call x86_64;
		 * utsname's fields are far longer than the name. */
		if (uname(&u) != 0 || strcmp(u.machine, "amd64") == 0)
			memcpy(u.machine, "x86_64", sizeof("x86_64"));
		done = 1;
	}
	return u.machine;
}

char cfa_plat_path_list_sep(void)
{
	return ':';
}

/* a + b + c in a new allocation (free), or NULL. */
static char *join3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *out = malloc(la + lb + lc + 1);

	if (!out)
		return NULL;
	memcpy(out, a, la);
	memcpy(out + la, b, lb);
	memcpy(out + la + lb, c, lc + 1);
	return out;
}

int cfa_plat_data_dir(char **out)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		*out = join3(xdg, "/cfapkg", "");
	else if (home && *home)
		*out = join3(home, "/.local/share/cfapkg", "");
	else
		return ENOENT;
	return *out ? 0 : ENOMEM;
}

int cfa_plat_exe_dir(char **out)
{
	/* The link's target has no size known beforehand: read it into a
	 * buffer that doubles until the whole target fits. */
	size_t len = 256;
	char *buf = NULL, *slash;
	ssize_t n;

	for (;;) {
		char *bigger = realloc(buf, len);
		if (!bigger) {
			free(buf);
			return ENOMEM;
		}
		buf = bigger;
		n = readlink("/proc/self/exe", buf, len);
		if (n <= 0 || (size_t)n < len || len > ((size_t)1 << 24))
			break;
		len *= 2;
	}
	if (n <= 0 || (size_t)n >= len || !(slash = memrchr(buf, '/', (size_t)n))) {
		free(buf);
		return ENOENT;
	}
	*slash = '\0';
	*out = buf;
	return 0;
}

bool cfa_plat_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool cfa_plat_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool cfa_plat_isatty(FILE *f)
{
	return isatty(fileno(f)) == 1;
}

unsigned cfa_plat_term_columns(FILE *f)
{
	struct winsize ws;

	return ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
}

FILE *cfa_plat_fopen(const char *path, const char *mode)
{
	return fopen(path, mode);
}

FILE *cfa_plat_fopen_shared(const char *path)
{
	return cfa_plat_fopen(path, "rb");
}

struct cfa_map {
	int fd;
	void *view;
	size_t len;
};

struct cfa_map *cfa_plat_map_open(const char *path, uint64_t *size)
{
	struct cfa_map *m;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || st.st_size <= 0 || !(m = calloc(1, sizeof(*m)))) {
		close(fd);
		return NULL;
	}
	m->fd = fd;
	*size = (uint64_t)st.st_size;
	return m;
}

static void unmap_view(struct cfa_map *m)
{
	if (m->view)
		munmap(m->view, m->len);
	m->view = NULL;
}

const void *cfa_plat_map_view(struct cfa_map *m, uint64_t offset, size_t len)
{
	void *v;

	unmap_view(m);
	v = mmap(NULL, len, PROT_READ, MAP_SHARED, m->fd, (off_t)offset);
	if (v == MAP_FAILED)
		return NULL;
	madvise(v, len, MADV_SEQUENTIAL);
	m->view = v;
	m->len = len;
	return v;
}

void cfa_plat_map_close(struct cfa_map *m)
{
	if (!m)
		return;
	unmap_view(m);
	close(m->fd);
	free(m);
}

int cfa_plat_fsync(FILE *f)
{
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		return errno;
	return 0;
}

void cfa_plat_start_writeback(FILE *f)
{
#ifdef SYNC_FILE_RANGE_WRITE
	if (fflush(f) == 0)
		sync_file_range(fileno(f), 0, 0, SYNC_FILE_RANGE_WRITE);
#else
	(void)f;
#endif
}

int cfa_plat_rename(const char *from, const char *to)
{
	return rename(from, to) == 0 ? 0 : errno;
}

int cfa_plat_exchange(const char *a, const char *b)
{
#ifdef RENAME_EXCHANGE
	return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0 ? 0 : errno;
#else
	(void)a;
	(void)b;
	return ENOSYS; /* glibc before 2.28, other systems */
#endif
}

int cfa_plat_remove(const char *path)
{
	return unlink(path) == 0 || errno == ENOENT ? 0 : errno;
}

long long cfa_plat_file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

void cfa_plat_sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int cfa_plat_symlink(const char *target, const char *path)
{
	return symlink(target, path) == 0 ? 0 : errno;
}

int cfa_plat_dir_link(const char *link, const char *name)
{
	char *tmp = join3(link, ".tmp", "");
	int rc = 0;

	if (!tmp)
		return ENOMEM;
	/* A relative target: the root can move and the link still holds. */
	unlink(tmp);
	if (symlink(name, tmp) != 0 || rename(tmp, link) != 0)
		rc = errno;
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

int cfa_plat_dir_link_read(const char *link, char **out)
{
	struct stat st;
	ssize_t n;

	*out = NULL;
	if (lstat(link, &st) != 0)
		return errno;
	if (!S_ISLNK(st.st_mode))
		return ENOENT;
	/* st_size is the text's length; a link rewritten meanwhile is cut. */
	if (!(*out = malloc((size_t)st.st_size + 2)))
		return ENOMEM;
	n = readlink(link, *out, (size_t)st.st_size + 1);
	if (n < 0 || n > st.st_size) {
		free(*out);
		*out = NULL;
		return n < 0 ? errno : EAGAIN;
	}
	(*out)[n] = '\0';
	return 0;
}

int cfa_plat_abs_path(const char *path, char **out)
{
	char *cwd;

	*out = NULL;
	if (path[0] == '/')
		return (*out = strdup(path)) ? 0 : ENOMEM;
	if (!(cwd = getcwd(NULL, 0)))
		return errno;
	*out = strcmp(path, ".") == 0 ? strdup(cwd) : join3(cwd, "/", path);
	free(cwd);
	return *out ? 0 : ENOMEM;
}

int cfa_plat_hardlink(const char *target, const char *path)
{
	return link(target, path) == 0 ? 0 : errno;
}

int cfa_plat_copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	struct stat st;
	ssize_t n = 0;
	int in, out, rc = 0;

	if ((in = open(from, O_RDONLY)) < 0)
		return errno;
	if (fstat(in, &st) != 0 ||
	    (out = open(to, O_WRONLY | O_CREAT | O_EXCL, st.st_mode & 0777)) < 0) {
		rc = errno;
		close(in);
		return rc;
	}
	while (rc == 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = errno ? errno : EIO;
	if (n < 0 || fsync(out) != 0)
		rc = rc ? rc : errno;
	close(in);
	if (close(out) != 0 && !rc)
		rc = errno;
	if (rc)
		unlink(to);
	return rc;
}

void cfa_plat_set_mode(const char *path, unsigned mode)
{
	chmod(path, (mode_t)(mode & 0777));
}

int cfa_plat_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
		return -1;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cfa_plat_free_space(const char *path, uint64_t *bytes)
{
	struct statvfs st;

	if (statvfs(path, &st) != 0)
		return errno;
	*bytes = (uint64_t)st.f_bavail * (uint64_t)st.f_frsize;
	return 0;
}

long long cfa_plat_file_mtime(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_mtime : -1;
}

int cfa_plat_write_errno(void)
{
	return errno;
}

static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_make(void)
{
	utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

void *cfa_plat_utf8_begin(void)
{
	pthread_once(&utf8_once, utf8_make);
	return utf8_locale ? (void *)uselocale(utf8_locale) : NULL;
}

void cfa_plat_utf8_end(void *token)
{
	if (token)
		uselocale((locale_t)token);
}

int cfa_plat_file_mode(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

bool cfa_plat_regular_file(const char *path, long long *size, int *mode)
{
	struct stat st;

	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	*size = (long long)st.st_size;
	*mode = (int)(st.st_mode & 07777);
	return true;
}

struct cfa_dir {
	int fd;
};

struct cfa_dir *cfa_plat_dir_open(const char *path)
{
	struct cfa_dir *d = malloc(sizeof(*d));

	if (d && (d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		free(d);
		d = NULL;
	}
	return d;
}

bool cfa_plat_regular_file_at(struct cfa_dir *d, const char *rel, long long *size, int *mode)
{
	struct stat st;

	if (fstatat(d->fd, rel, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
		return false;
	*size = (long long)st.st_size;
	*mode = (int)(st.st_mode & 07777);
	return true;
}

int cfa_plat_hardlink_at(struct cfa_dir *from, const char *from_name, struct cfa_dir *to,
                         const char *to_name)
{
	return linkat(from->fd, from_name, to->fd, to_name, 0) == 0 ? 0 : errno;
}

void cfa_plat_dir_close(struct cfa_dir *d)
{
	if (d) {
		close(d->fd);
		free(d);
	}
}

void cfa_plat_sync_fs(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		syncfs(fd);
		close(fd);
	}
}

static int remove_entry(const char *dir, const char *name);

struct rm_ctx {
	const char *dir;
	int err;
};

static int rm_one(const char *name, void *arg)
{
	struct rm_ctx *c = arg;
	int e = remove_entry(c->dir, name);
	if (e && !c->err)
		c->err = e;
	return 0;
}

static int remove_entry(const char *dir, const char *name)
{
	char *path = join3(dir, "/", name);
	struct stat st;
	int rc;

	if (!path)
		return ENOMEM;
	if (lstat(path, &st) != 0)
		rc = errno == ENOENT ? 0 : errno;
	else if (S_ISDIR(st.st_mode))
		rc = cfa_plat_remove_tree(path);
	else
		rc = unlink(path) == 0 ? 0 : errno;
	free(path);
	return rc;
}

int cfa_plat_remove_tree(const char *path)
{
	struct rm_ctx c = {path, 0};

	if (cfa_plat_list_dir(path, rm_one, &c) == ENOENT)
		return 0;
	if (rmdir(path) != 0 && errno != ENOENT && !c.err)
		c.err = errno;
	return c.err;
}

int cfa_plat_mkdir_p(const char *path)
{
	size_t i, n = strlen(path);
	char *tmp;
	int rc = 0;

	if (n == 0)
		return ENOENT;
	/* Usually only the last folder is missing: one call, not one per level. */
	if (mkdir(path, 0777) == 0)
		return 0;
	if (errno == EEXIST)
		return cfa_plat_is_dir(path) ? 0 : ENOTDIR;
	if (!(tmp = strdup(path)))
		return ENOMEM;
	for (i = 1; i <= n && !rc; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
			rc = errno;
		tmp[i] = path[i];
	}
	free(tmp);
	return rc ? rc : cfa_plat_is_dir(path) ? 0 : ENOTDIR;
}

int cfa_plat_list_dir(const char *path, int (*fn)(const char *name, void *arg), void *arg)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return errno;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		rc = fn(e->d_name, arg);
	}
	closedir(d);
	return rc;
}

const char *cfa_plat_strerror(int code)
{
	if (code == ENOSPC)
		return "no space left on device";
	return code ? strerror(code) : "an error the system did not name";
}

void cfa_plat_utf8_args(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
}

void cfa_plat_kill_self(void)
{
	kill(getpid(), SIGKILL);
}
