/*
 * posix.c - the platform seam on Linux and other POSIX systems.
 */
/* _GNU_SOURCE also declares memrchr, sync_file_range and renameat2, all GNU
 * extensions. */
#define _GNU_SOURCE /* syncfs */
#include "platform/platform.h"

#include <dirent.h>
#include <limits.h>
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
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

const char *cfa_plat_os(void)
{
	return "linux";
}

/* Filled once and returned as is: callers keep the pointer.  Once, under
 * pthread_once: two threads asking first must not write it together. */
static struct utsname arch_uts;
static pthread_once_t arch_once = PTHREAD_ONCE_INIT;

static void arch_fill(void)
{
	/* The BSDs say amd64 for what Linux and the recipes call x86_64;
	 * utsname's fields are far longer than the name. */
	if (uname(&arch_uts) != 0 || strcmp(arch_uts.machine, "amd64") == 0)
		memcpy(arch_uts.machine, "x86_64", sizeof("x86_64"));
}

const char *cfa_plat_arch(void)
{
	pthread_once(&arch_once, arch_fill);
	return arch_uts.machine;
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

	/* The XDG base directory rules: a relative XDG_DATA_HOME is invalid
	 * and is ignored. */
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
		/* readlink does not terminate the text and fills the buffer
		 * exactly when the target was cut; only n < len proves it
		 * whole. */
		n = readlink("/proc/self/exe", buf, len);
		if (n <= 0 || (size_t)n < len || len > ((size_t)1 << 24))
			break;
		len *= 2;
	}
	/* No /proc (a chroot, a container without it) or a target too long:
	 * the caller has no executable folder to go by. */
	if (n <= 0 || (size_t)n >= len || !(slash = memrchr(buf, '/', (size_t)n))) {
		free(buf);
		return ENOENT;
	}
	/* The folder, not the executable: cutting at the last '/' also
	 * terminates the text readlink left unterminated. */
	*slash = '\0';
	*out = buf;
	return 0;
}

bool cfa_plat_is_file(const char *path)
{
	struct stat st;
	/* stat follows symbolic links: a link to a file is a file here. */
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

	/* 0: not a terminal, or one that does not know its width (a serial
	 * console); callers then pick their own. */
	return ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
}

FILE *cfa_plat_fopen(const char *path, const char *mode)
{
	return fopen(path, mode);
}

FILE *cfa_plat_fopen_private(const char *path)
{
	FILE *f;
	int fd;

	/* O_EXCL after the unlink: a link someone put there is refused, not
	 * followed. */
	if (unlink(path) != 0 && errno != ENOENT)
		return NULL;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		return NULL;
	if (!(f = fdopen(fd, "wb")))
		close(fd);
	return f;
}

/* POSIX has no share modes: another process may rename or delete an open file
 * anyway, so this is a plain read. */
FILE *cfa_plat_fopen_shared(const char *path)
{
	return cfa_plat_fopen(path, "rb");
}

struct cfa_rfile {
	int fd;
};

struct cfa_rfile *cfa_plat_rfile_open(const char *path, uint64_t *size,
                                      enum cfa_rfile_kind *kind)
{
	/* O_NONBLOCK: a FIFO opened for reading would wait for a writer. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err = 0;
	struct cfa_rfile *f = NULL;
	struct stat st;

	*kind = CFA_RFILE_ERROR;
	*size = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0)
		err = errno;
	else if (!S_ISREG(st.st_mode))
		*kind = S_ISDIR(st.st_mode) ? CFA_RFILE_DIR : CFA_RFILE_OTHER;
	else if (!(f = malloc(sizeof(*f))))
		err = ENOMEM;
	if (!f) {
		close(fd);
		errno = err;
		return NULL;
	}
	f->fd = fd;
	*size = (uint64_t)st.st_size;
	*kind = CFA_RFILE_FILE;
	return f;
}

size_t cfa_plat_rfile_read(struct cfa_rfile *f, void *buf, size_t n, uint64_t offset)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(f->fd, (char *)buf + got, n - got, (off_t)(offset + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

bool cfa_plat_rfile_read2(struct cfa_rfile *f, void *buf, size_t n, void *more, size_t m,
                          uint64_t offset)
{
	struct iovec v[2] = {{buf, n}, {more, m}};
	ssize_t r;
	size_t got;

	do
		r = preadv(f->fd, v, 2, (off_t)offset);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return false;
	got = (size_t)r;
	/* A short read (a signal, the end of the file): the rest of each
	 * buffer, one at a time. */
	if (got < n) {
		if (cfa_plat_rfile_read(f, (char *)buf + got, n - got, offset + got) != n - got)
			return false;
		got = n;
	}
	got -= n;
	return got >= m ||
	       cfa_plat_rfile_read(f, (char *)more + got, m - got, offset + n + got) == m - got;
}

void cfa_plat_rfile_close(struct cfa_rfile *f)
{
	if (!f)
		return;
	close(f->fd);
	free(f);
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
	/* mmap refuses a length of 0, so an empty file has no map; callers
	 * read it as nothing to map. */
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

	/* One view at a time: the previous view's pointer is invalid once
	 * this is called. */
	unmap_view(m);
	/* offset must be a multiple of the page size, or mmap fails with
	 * EINVAL. */
	v = mmap(NULL, len, PROT_READ, MAP_SHARED, m->fd, (off_t)offset);
	if (v == MAP_FAILED)
		return NULL;
	/* Only a hint, read ahead and drop behind; its failure changes
	 * nothing. */
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

void cfa_plat_keep_freed_memory(bool on)
{
#if defined(__GLIBC__)
	/* 128 KiB is glibc's own starting threshold. */
	mallopt(M_TRIM_THRESHOLD, on ? INT_MAX : 128 * 1024);
#else
	(void)on;
#endif
}

int cfa_plat_fsync(FILE *f)
{
	/* stdio's buffer first: fsync only sees what has reached the
	 * kernel. */
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		return errno;
	return 0;
}

void cfa_plat_start_writeback(FILE *f)
{
#ifdef SYNC_FILE_RANGE_WRITE
	if (fflush(f) == 0)
		/* Starts writing the file's dirty pages without waiting, so
		 * the fsync that follows later finds less to do; 0, 0 is the
		 * whole file. */
		sync_file_range(fileno(f), 0, 0, SYNC_FILE_RANGE_WRITE);
#else
	(void)f;
#endif
}

int cfa_plat_rename(const char *from, const char *to)
{
	/* rename replaces to atomically, even when another process holds it
	 * open. */
	return rename(from, to) == 0 ? 0 : errno;
}

int cfa_plat_exchange(const char *a, const char *b)
{
#ifdef RENAME_EXCHANGE
	/* Swaps two names in one step, so there is no moment when neither
	 * exists; file systems without support answer EINVAL. */
	return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0 ? 0 : errno;
#else
	(void)a;
	(void)b;
	return ENOSYS; /* glibc before 2.28, other systems */
#endif
}

int cfa_plat_remove(const char *path)
{
	/* Removing what is already gone succeeds: callers clean up without
	 * checking first. */
	return unlink(path) == 0 || errno == ENOENT ? 0 : errno;
}

long long cfa_plat_file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

void cfa_plat_sync_dir(const char *path)
{
	/* A rename or a new file is only durable once its folder's entry is:
	 * fsync on the folder writes that.  Best effort: nothing to do on
	 * failure. */
	int fd = open(path, O_RDONLY | O_DIRECTORY);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

bool cfa_plat_sync_dir_covers_links(void)
{
	return true; /* a symbolic link's target is held in its own entry */
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
	/* A link left over by an interrupted earlier call would make symlink
	 * fail with EEXIST. */
	unlink(tmp);
	/* Made under a temporary name, then renamed over the old link:
	 * readers see the old target or the new one, never no link. */
	if (symlink(name, tmp) != 0 || rename(tmp, link) != 0)
		rc = errno;
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* Read with no stat first (an environment's link names a generation
 * number, and every command reads it): a buffer the text filled may have
 * cut it, so it is read again into one twice the size. */
int cfa_plat_dir_link_read(const char *link, char **out)
{
	size_t size;
	ssize_t n;
	char *buf;

	*out = NULL;
	for (size = 256; size <= ((size_t)1 << 20); size *= 2) {
		if (!(buf = malloc(size)))
			return ENOMEM;
		if ((n = readlink(link, buf, size)) < 0) {
			int rc = errno == EINVAL ? ENOENT : errno; /* EINVAL: not a link */
			free(buf);
			return rc;
		}
		if ((size_t)n < size) {
			buf[n] = '\0';
			*out = buf;
			return 0;
		}
		free(buf);
	}
	return ENAMETOOLONG;
}

int cfa_plat_abs_path(const char *path, char **out)
{
	char *cwd;

	*out = NULL;
	if (path[0] == '/')
		return (*out = strdup(path)) ? 0 : ENOMEM;
	/* getcwd(NULL, 0) allocating a buffer of the needed size is an
	 * extension that glibc, musl and the BSDs share. */
	if (!(cwd = getcwd(NULL, 0)))
		return errno;
	/* "." and "./x" are not simplified further: the path is absolute, not
	 * canonical. */
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
	    /* O_EXCL: an existing file at to is never overwritten, and a link
	     * planted there is not followed. */
	    (out = open(to, O_WRONLY | O_CREAT | O_EXCL, st.st_mode & 0777)) < 0) {
		rc = errno;
		close(in);
		return rc;
	}
	while (rc == 0 && (n = read(in, buf, sizeof(buf))) > 0)
		/* A short write to a regular file is taken as an error (most
		 * often a full disk), not retried. */
		if (write(out, buf, (size_t)n) != n)
			rc = errno ? errno : EIO;
	if (n < 0 || fsync(out) != 0)
		rc = rc ? rc : errno;
	close(in);
	if (close(out) != 0 && !rc)
		rc = errno;
	/* No half-copied file is left behind under the final name. */
	if (rc)
		unlink(to);
	return rc;
}

void cfa_plat_set_mode(const char *path, unsigned mode)
{
	/* Permission bits only: setuid, setgid and sticky bits from a package
	 * are never set. */
	chmod(path, (mode_t)(mode & 0777));
}

int cfa_plat_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
		return -1;
	/* One file under two names (a hard link, a symlink followed) has one
	 * device and inode. */
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cfa_plat_free_space(const char *path, uint64_t *bytes)
{
	struct statvfs st;

	if (statvfs(path, &st) != 0)
		return errno;
	/* f_bavail counts blocks free to unprivileged users, not those kept
	 * for root; f_frsize is the unit they are counted in. */
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

/* A UTF-8 LC_CTYPE for libarchive's conversion of entry names; made once and
 * never freed, as it lives as long as the process. */
static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_make(void)
{
	/* C.UTF-8 exists on glibc 2.35 and later and on most distributions
	 * before that; without it the process's own locale stays in force. */
	utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

void *cfa_plat_utf8_begin(void)
{
	pthread_once(&utf8_once, utf8_make);
	/* uselocale changes only this thread's locale and returns the one it
	 * replaced, which is the token cfa_plat_utf8_end restores. */
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

	/* lstat: a symbolic link's own mode, not its target's. */
	return lstat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

bool cfa_plat_regular_file(const char *path, long long *size, int *mode)
{
	struct stat st;

	/* A symbolic link is not a regular file here, even when it points at
	 * one. */
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	*size = (long long)st.st_size;
	*mode = (int)(st.st_mode & 07777);
	return true;
}

/* v in decimal at p, zeros before it up to width digits, then sep; the
 * end.  A stamp is made for every recipe file and store folder a command
 * looks at, a hundred or more: snprintf's 2,000-odd instructions each
 * were a tenth of a no-op install's. */
static char *put_dec(char *p, long long v, int width, char sep)
{
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	char digits[24];
	int n = 0;

	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	while (n < width)
		digits[n++] = '0';
	if (v < 0)
		*p++ = '-';
	while (n)
		*p++ = digits[--n];
	*p++ = sep;
	return p;
}

/* cfa_plat_file_stamp of path, resolved against the folder open as dirfd
 * (AT_FDCWD: as given). */
static bool stamp_at(int dirfd, const char *path, char out[64])
{
	struct stat st;
	char text[96], *end = text;

	if (fstatat(dirfd, path, &st, 0) != 0)
		return false;
	/* "SIZE.SECONDS.NANOSECONDS.INODE", as "%lld.%lld.%09ld.%llu" spells
	 * it.  The inode joins size and time: a file replaced by rename gets
	 * a new inode even when size and time match. */
	end = put_dec(end, (long long)st.st_size, 1, '.');
	end = put_dec(end, (long long)st.st_mtim.tv_sec, 1, '.');
	end = put_dec(end, (long long)st.st_mtim.tv_nsec, 9, '.');
	if ((unsigned long long)st.st_ino > (unsigned long long)LLONG_MAX) {
		/* Past a long long's range: the general way. */
		if (snprintf(end, 24, "%llu", (unsigned long long)st.st_ino) >= 24)
			return false;
		end += strlen(end) + 1;
	} else
		end = put_dec(end, (long long)st.st_ino, 1, '\0');
	if (end - text > 64)
		return false;
	memcpy(out, text, (size_t)(end - text));
	return true;
}

bool cfa_plat_file_stamp(const char *path, char out[64])
{
	return stamp_at(AT_FDCWD, path, out);
}

struct cfa_dir {
	int fd;
};

struct cfa_dir *cfa_plat_dir_open(const char *path)
{
	struct cfa_dir *d = malloc(sizeof(*d));

	/* Held open so that the *_at calls resolve names against this folder
	 * even if its path is renamed meanwhile. */
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

bool cfa_plat_file_stamp_at(struct cfa_dir *d, const char *rel, char out[64])
{
	return stamp_at(d->fd, *rel ? rel : ".", out);
}

int cfa_plat_hardlink_at(struct cfa_dir *from, const char *from_name, struct cfa_dir *to,
                         const char *to_name)
{
	/* Flags 0: a symbolic link at from_name is linked itself, not
	 * followed. */
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
		/* Flushes the whole file system holding path in one call,
		 * cheaper than an fsync per file after many writes. */
		syncfs(fd);
		close(fd);
	}
}

/* remove_entry and cfa_plat_remove_tree call each other, one level per
 * folder. */
static int remove_entry(const char *dir, const char *name);

struct rm_ctx {
	const char *dir;
	int err;
};

static int rm_one(const char *name, void *arg)
{
	struct rm_ctx *c = arg;
	int e = remove_entry(c->dir, name);
	/* The first error is kept and removal goes on: as much as can be
	 * removed is. */
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
	/* lstat: a symbolic link to a folder is unlinked, never followed
	 * into. */
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

	/* A tree that is already gone is removed. */
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
	/* From i = 1 so that an absolute path's leading '/' is not taken for
	 * an empty folder name. */
	for (i = 1; i <= n && !rc; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		/* 0777 less the umask, as every other program creates
		 * folders. */
		if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
			rc = errno;
		tmp[i] = path[i];
	}
	free(tmp);
	/* EEXIST also covers a file of that name: only a folder at the end is
	 * success. */
	return rc ? rc : cfa_plat_is_dir(path) ? 0 : ENOTDIR;
}

int cfa_plat_list_dir(const char *path, int (*fn)(const char *name, void *arg), void *arg)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return errno;
	/* readdir's order is the file system's; callers that need an order
	 * sort the names. */
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
	/* glibc's "No space left on device", in the lower case of cfapkg's
	 * messages. */
	if (code == ENOSPC)
		return "no space left on device";
	return code ? strerror(code) : "an error the system did not name";
}

/* Arguments are already bytes in the locale's encoding, taken as UTF-8; only
 * Windows needs to convert them. */
void cfa_plat_utf8_args(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
}

void cfa_plat_kill_self(void)
{
	/* SIGKILL cannot be caught or ignored: no handler, atexit function or
	 * stdio flush runs. */
	kill(getpid(), SIGKILL);
}
