/*
 * win32.c - the platform seam on Windows.  UTF-8 in, UTF-16 to the system.
 * No symlink privilege is assumed anywhere.
 */
#define WIN32_LEAN_AND_MEAN
#include "platform/platform.h"
#include "platform/win32_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>
#include <fcntl.h>
#include <io.h>
#include <shellapi.h>
#include <share.h>
#include <sys/stat.h>

/* The longest path the wide file APIs accept with the \\?\ prefix, in UTF-16
 * units. */
#define WPATH_MAX 32768

const char *cfa_plat_os(void)
{
	return "windows";
}

const char *cfa_plat_arch(void)
{
	SYSTEM_INFO si;

	/* Native, not GetSystemInfo: an x86_64 build running under emulation
	 * on ARM64 must report the machine, not what it is emulated as. */
	GetNativeSystemInfo(&si);
	switch (si.wProcessorArchitecture) {
	case PROCESSOR_ARCHITECTURE_ARM64:
		return "aarch64";
	case PROCESSOR_ARCHITECTURE_INTEL:
		return "x86";
	default:
		return "x86_64";
	}
}

char cfa_plat_path_list_sep(void)
{
	return ';';
}

/* UTF-8 to a freshly allocated UTF-16 string, or NULL. */
wchar_t *cfa_win_widen(const char *s)
{
	/* MB_ERR_INVALID_CHARS: invalid UTF-8 is refused rather than turned
	 * into U+FFFD, which would name another file.  With -1 the count
	 * includes the terminator. */
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	wchar_t *w;

	if (n <= 0 || n > WPATH_MAX)
		return NULL;
	w = malloc((size_t)n * sizeof(wchar_t));
	if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
		free(w);
		w = NULL;
	}
	return w;
}

/* A UTF-8 path as the wide form the file APIs take: backslashes, and the
 * \\?\ prefix for long paths (past MAX_PATH), which also lifts the limit
 * without the LongPathsEnabled setting.  Freshly allocated, or NULL. */
static wchar_t *wide_path(const char *path)
{
	wchar_t *w = cfa_win_widen(path), *full, *out;
	DWORD n;
	size_t i, len;

	if (!w)
		return NULL;
	for (i = 0; w[i]; i++)
		if (w[i] == L'/')
			w[i] = L'\\';
	len = i;
	/* MAX_PATH - 12 is CreateDirectoryW's limit, which leaves room for an
	 * 8.3 file name inside the folder; shorter paths go to the system as
	 * they are. */
	if (len < MAX_PATH - 12 || wcsncmp(w, L"\\\\?\\", 4) == 0)
		return w;
	/* The \\?\ form is passed to the file system unparsed: "..", "." and
	 * relative paths are not resolved there, so the path is made absolute
	 * and clean first. */
	n = GetFullPathNameW(w, 0, NULL, NULL);
	full = n ? malloc((n + 8) * sizeof(wchar_t)) : NULL;
	/* Without a full path the unprefixed form is passed on; the call that
	 * uses it then fails with the system's own error. */
	if (!full || GetFullPathNameW(w, n, full, NULL) == 0) {
		free(full);
		return w;
	}
	free(w);
	out = malloc((wcslen(full) + 8) * sizeof(wchar_t));
	/* A network path \\server\share becomes \\?\UNC\server\share, not
	 * \\?\\\server. */
	if (out && wcsncmp(full, L"\\\\", 2) == 0)
		_snwprintf(out, wcslen(full) + 8, L"\\\\?\\UNC\\%ls", full + 2);
	else if (out)
		_snwprintf(out, wcslen(full) + 8, L"\\\\?\\%ls", full);
	free(full);
	return out;
}

wchar_t *cfa_win_path(const char *path)
{
	return wide_path(path);
}

int cfa_win_narrow(const wchar_t *w, char *buf, size_t len)
{
	/* 0 when buf is too small: the text is never cut, it fails whole. */
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, buf, (int)len, NULL, NULL);
	return n > 0 ? 0 : ENAMETOOLONG;
}

char *cfa_win_narrow_dup(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
	/* Unpaired surrogates, which Windows names may hold, become U+FFFD
	 * here: such a name cannot be opened again by its UTF-8 spelling. */
	char *out = n > 0 ? malloc((size_t)n) : NULL;

	if (out && WideCharToMultiByte(CP_UTF8, 0, w, -1, out, n, NULL, NULL) != n) {
		free(out);
		out = NULL;
	}
	return out;
}

int cfa_plat_data_dir(char **out)
{
	/* Local, not roaming, application data: packages are large and belong
	 * to this machine. */
	const wchar_t *base = _wgetenv(L"LOCALAPPDATA");
	char *dir;
	size_t n;

	if (!base || !*base)
		return ENOENT;
	if (!(dir = cfa_win_narrow_dup(base)))
		return ENOMEM;
	n = strlen(dir);
	if (!(*out = malloc(n + sizeof("\\cfapkg")))) {
		free(dir);
		return ENOMEM;
	}
	memcpy(*out, dir, n);
	memcpy(*out + n, "\\cfapkg", sizeof("\\cfapkg"));
	free(dir);
	return 0;
}

int cfa_plat_exe_dir(char **out)
{
	/* GetModuleFileNameW cuts the name to the buffer without saying so
	 * but by filling it: grow until it leaves room. */
	DWORD len = MAX_PATH, n = 0;
	wchar_t *w = NULL, *slash;

	while (len <= WPATH_MAX) {
		wchar_t *bigger = realloc(w, len * sizeof(wchar_t));
		if (!bigger) {
			free(w);
			return ENOMEM;
		}
		w = bigger;
		n = GetModuleFileNameW(NULL, w, len);
		if (n == 0 || n < len)
			break;
		len *= 2;
	}
	/* Past WPATH_MAX the name is taken as unknown, like a failed call. */
	if (n == 0 || n >= len || !(slash = wcsrchr(w, L'\\'))) {
		free(w);
		return ENOENT;
	}
	*slash = L'\0';
	*out = cfa_win_narrow_dup(w);
	free(w);
	return *out ? 0 : ENOMEM;
}

/* GetFileAttributesW follows no link: a junction or symbolic link reports its
 * own attributes, a folder's for a directory link. */
static DWORD attributes(const char *path)
{
	wchar_t *w = wide_path(path);
	DWORD a;

	if (!w)
		return INVALID_FILE_ATTRIBUTES;
	a = GetFileAttributesW(w);
	free(w);
	return a;
}

bool cfa_plat_is_file(const char *path)
{
	DWORD a = attributes(path);
	return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

bool cfa_plat_is_dir(const char *path)
{
	DWORD a = attributes(path);
	return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
}

bool cfa_plat_isatty(FILE *f)
{
	/* _isatty is true for any character device, NUL included: only a
	 * console has a console mode. */
	HANDLE h = (HANDLE)_get_osfhandle(_fileno(f));
	DWORD mode;

	return h != INVALID_HANDLE_VALUE && GetConsoleMode(h, &mode) != 0;
}

unsigned cfa_plat_term_columns(FILE *f)
{
	HANDLE h = (HANDLE)_get_osfhandle(_fileno(f));
	CONSOLE_SCREEN_BUFFER_INFO info;

	/* The window's width, not the buffer's (which may be far wider). */
	if (h == INVALID_HANDLE_VALUE || !GetConsoleScreenBufferInfo(h, &info))
		return 0;
	return (unsigned)(info.srWindow.Right - info.srWindow.Left + 1);
}

FILE *cfa_plat_fopen(const char *path, const char *mode)
{
	wchar_t *w = wide_path(path), *wm = cfa_win_widen(mode);
	FILE *f = NULL;

	if (w && wm)
		f = _wfopen(w, wm);
	free(w);
	free(wm);
	return f;
}

FILE *cfa_plat_fopen_private(const char *path)
{
	/* No POSIX modes: the folder's ACL decides who may read it. */
	return cfa_plat_fopen(path, "wb");
}

FILE *cfa_plat_fopen_shared(const char *path)
{
	wchar_t *w = wide_path(path);
	/* CreateFileW rather than _wfopen: the C runtime opens without
	 * FILE_SHARE_DELETE, and then another process could not rename or
	 * delete the file while it is read. */
	HANDLE h = INVALID_HANDLE_VALUE;
	FILE *f = NULL;
	int fd;

	if (w)
		h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
		                NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return NULL;
	/* The descriptor takes over the handle: from here closing the
	 * descriptor (or the FILE) closes the handle too. */
	if ((fd = _open_osfhandle((intptr_t)h, _O_RDONLY | _O_BINARY)) < 0) {
		CloseHandle(h);
		return NULL;
	}
	/* _close releases the handle as well, since fd owns it. */
	if (!(f = _fdopen(fd, "rb")))
		_close(fd);
	return f;
}

struct cfa_rfile {
	int fd;
};

/* The C runtime's descriptors: they set errno as POSIX's do. */
struct cfa_rfile *cfa_plat_rfile_open(const char *path, uint64_t *size,
                                      enum cfa_rfile_kind *kind)
{
	wchar_t *w = wide_path(path);
	DWORD attrs = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
	struct cfa_rfile *f = NULL;
	struct _stati64 st;
	int fd = -1;

	*kind = CFA_RFILE_ERROR;
	*size = 0;
	if (!w)
		errno = ENOMEM;
	else if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY))
		*kind = CFA_RFILE_DIR; /* opening one fails with EACCES, which would mislead */
	else if (_wsopen_s(&fd, w, _O_RDONLY | _O_BINARY | _O_NOINHERIT, _SH_DENYNO, 0) != 0)
		fd = -1;
	free(w);
	if (fd < 0)
		return NULL;
	/* A failed _fstati64 leaves its errno. */
	if (_fstati64(fd, &st) == 0 && (st.st_mode & _S_IFMT) != _S_IFREG)
		*kind = CFA_RFILE_OTHER;
	else if (_fstati64(fd, &st) == 0 && !(f = malloc(sizeof(*f))))
		errno = ENOMEM;
	if (!f) {
		int err = errno;
		_close(fd);
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

	if (_lseeki64(f->fd, (__int64)offset, SEEK_SET) < 0)
		return 0;
	while (got < n) {
		/* _read counts in unsigned ints. */
		unsigned want = n - got > (1u << 30) ? 1u << 30 : (unsigned)(n - got);
		int r = _read(f->fd, (char *)buf + got, want);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/* Windows reads into one buffer per call. */
bool cfa_plat_rfile_read2(struct cfa_rfile *f, void *buf, size_t n, void *more, size_t m,
                          uint64_t offset)
{
	return cfa_plat_rfile_read(f, buf, n, offset) == n &&
	       cfa_plat_rfile_read(f, more, m, offset + n) == m;
}

void cfa_plat_rfile_close(struct cfa_rfile *f)
{
	if (!f)
		return;
	_close(f->fd);
	free(f);
}

struct cfa_map {
	HANDLE mapping;
	const void *view;
};

struct cfa_map *cfa_plat_map_open(const char *path, uint64_t *size)
{
	wchar_t *w = wide_path(path);
	HANDLE file = INVALID_HANDLE_VALUE, mapping = NULL;
	LARGE_INTEGER sz = {0};
	struct cfa_map *m = NULL;

	if (w)
		/* Without FILE_SHARE_WRITE no other process can open the file
		 * for writing while it is mapped. */
		file = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
		                   FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	/* CreateFileMappingW refuses an empty file (ERROR_FILE_INVALID), so
	 * none is tried. */
	if (file != INVALID_HANDLE_VALUE && GetFileSizeEx(file, &sz) && sz.QuadPart > 0)
		mapping = CreateFileMappingW(file, NULL, PAGE_READONLY, 0, 0, NULL);
	if (file != INVALID_HANDLE_VALUE)
		CloseHandle(file); /* the mapping keeps it */
	if (!mapping || !(m = calloc(1, sizeof(*m)))) {
		if (mapping)
			CloseHandle(mapping);
		return NULL;
	}
	m->mapping = mapping;
	*size = (uint64_t)sz.QuadPart;
	return m;
}

const void *cfa_plat_map_view(struct cfa_map *m, uint64_t offset, size_t len)
{
	if (m->view)
		UnmapViewOfFile(m->view);
	/* The offset must be a multiple of the allocation granularity, 64
	 * KiB: CFA_MAP_ALIGN. */
	m->view = MapViewOfFile(m->mapping, FILE_MAP_READ, (DWORD)(offset >> 32),
	                        (DWORD)(offset & 0xffffffffu), len);
	return m->view;
}

void cfa_plat_map_close(struct cfa_map *m)
{
	if (!m)
		return;
	if (m->view)
		UnmapViewOfFile(m->view);
	CloseHandle(m->mapping);
	free(m);
}

/* The process heap keeps what is freed for the next allocation anyway. */
void cfa_plat_keep_freed_memory(bool on)
{
	(void)on;
}

int cfa_plat_fsync(FILE *f)
{
	DWORD err;
	int code;

	if (fflush(f) != 0)
		return (code = cfa_plat_write_errno()) ? code : EIO;
	/* FlushFileBuffers writes the file's data and metadata and waits for
	 * the disk. */
	if (FlushFileBuffers((HANDLE)_get_osfhandle(_fileno(f))))
		return 0;
	err = GetLastError();
	return err == ERROR_DISK_FULL || err == ERROR_HANDLE_DISK_FULL ? ENOSPC : EIO;
}

void cfa_plat_start_writeback(FILE *f)
{
	(void)f; /* FlushFileBuffers waits; the final flush does the work */
}

int cfa_plat_rename(const char *from, const char *to)
{
	wchar_t *a = wide_path(from), *b = wide_path(to);
	/* WRITE_THROUGH returns only once the rename is on the disk.  It
	 * fails while another process holds b open without
	 * FILE_SHARE_DELETE. */
	BOOL ok = a && b && MoveFileExW(a, b, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);

	free(a);
	free(b);
	/* Every failure reads as EACCES; GetLastError's finer cause is
	 * dropped. */
	return ok ? 0 : EACCES;
}

int cfa_plat_exchange(const char *a, const char *b)
{
	(void)a;
	(void)b;
	return ENOSYS; /* no call swaps two folders' names; the caller renames */
}

long long cfa_plat_file_size(const char *path)
{
	WIN32_FILE_ATTRIBUTE_DATA d;
	wchar_t *w = wide_path(path);
	BOOL ok = w && GetFileAttributesExW(w, GetFileExInfoStandard, &d);

	free(w);
	if (!ok || (d.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY))
		return -1;
	/* The size comes from the folder entry, without opening the file. */
	return ((long long)d.nFileSizeHigh << 32) | d.nFileSizeLow;
}

bool cfa_plat_regular_file(const char *path, long long *size, int *mode)
{
	WIN32_FILE_ATTRIBUTE_DATA d;
	wchar_t *w = wide_path(path);
	BOOL ok = w && GetFileAttributesExW(w, GetFileExInfoStandard, &d);

	free(w);
	/* A reparse point (symbolic link, junction, deduplicated or cloud
	 * file) is not a plain file here, like a symbolic link on POSIX. */
	if (!ok || (d.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT)))
		return false;
	*size = ((long long)d.nFileSizeHigh << 32) | d.nFileSizeLow;
	*mode = -1; /* attributes and ACLs, not permission bits */
	return true;
}

/* Windows looks paths up by name either way: the folder is its path. */
struct cfa_dir {
	char *path;
};

/* dir/name in one allocation (free). */
static char *in_dir(const struct cfa_dir *d, const char *name)
{
	size_t n = strlen(d->path), m = strlen(name);
	char *path = malloc(n + m + 2);

	if (path) {
		memcpy(path, d->path, n);
		/* A forward slash: wide_path turns it into a backslash with
		 * the rest. */
		path[n] = '/';
		memcpy(path + n + 1, name, m + 1);
	}
	return path;
}

struct cfa_dir *cfa_plat_dir_open(const char *path)
{
	struct cfa_dir *d = cfa_plat_is_dir(path) ? malloc(sizeof(*d)) : NULL;

	if (d && !(d->path = _strdup(path))) {
		free(d);
		d = NULL;
	}
	return d;
}

bool cfa_plat_regular_file_at(struct cfa_dir *d, const char *rel, long long *size, int *mode)
{
	char *path = in_dir(d, rel);
	bool ok;

	if (!path)
		return false;
	ok = cfa_plat_regular_file(path, size, mode);
	free(path);
	return ok;
}

bool cfa_plat_file_stamp_at(struct cfa_dir *d, const char *rel, char out[64])
{
	char *path = *rel ? in_dir(d, rel) : _strdup(d->path);
	bool ok = path && cfa_plat_file_stamp(path, out);

	free(path);
	return ok;
}

/* Windows has no handle-relative link call: the names are joined. */
int cfa_plat_hardlink_at(struct cfa_dir *from, const char *from_name, struct cfa_dir *to,
                         const char *to_name)
{
	char *a = in_dir(from, from_name), *b = in_dir(to, to_name);
	int rc = a && b ? cfa_plat_hardlink(a, b) : ENOMEM;

	free(a);
	free(b);
	return rc;
}

void cfa_plat_dir_close(struct cfa_dir *d)
{
	if (d) {
		free(d->path);
		free(d);
	}
}

void cfa_plat_sync_dir(const char *path)
{
	(void)path; /* NTFS makes a rename durable with the file's own flush */
}

bool cfa_plat_sync_dir_covers_links(void)
{
	return false; /* a junction is retargeted in place, with no flush */
}

int cfa_plat_symlink(const char *target, const char *path)
{
	(void)target, (void)path;
	return ENOSYS; /* links would need a privilege; unpack copies instead */
}

int cfa_plat_hardlink(const char *target, const char *path)
{
	wchar_t *t = wide_path(target), *p = wide_path(path);
	/* CreateHardLinkW takes the new name first, the existing file second:
	 * the other way round from link(2). */
	BOOL ok = t && p && CreateHardLinkW(p, t, NULL);
	DWORD err = ok ? 0 : GetLastError();

	free(t);
	free(p);
	if (ok)
		return 0;
	/* EXDEV: hard links cannot cross volumes. */
	return err == ERROR_NOT_SAME_DEVICE ? EXDEV : err == ERROR_ALREADY_EXISTS ? EEXIST : EACCES;
}

/* No locale to change: names go to the system as UTF-16. */
void *cfa_plat_utf8_begin(void)
{
	return NULL;
}

void cfa_plat_utf8_end(void *token)
{
	(void)token;
}

void cfa_plat_sync_fs(const char *path)
{
	(void)path; /* files are flushed one by one as they are closed */
}

const char *cfa_plat_strerror(int code)
{
	if (code == ENOSPC)
		return "no space left on device";
	return code ? strerror(code) : "an error the system did not name";
}

void cfa_plat_utf8_args(int *argc, char ***argv)
{
	int n = 0, i;
	/* main's argv is in the ANSI code page, where characters outside it
	 * are already lost; the wide command line still has them. */
	wchar_t **wargv = CommandLineToArgvW(GetCommandLineW(), &n);
	char **out;

	/* The program's output is UTF-8; without this the console shows it in
	 * the OEM code page. */
	SetConsoleOutputCP(CP_UTF8);
	if (!wargv)
		return;
	/* Kept for the rest of the process, as argv is. */
	out = calloc((size_t)n + 1, sizeof(*out));
	for (i = 0; out && i < n; i++) {
		int len = WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, NULL, 0, NULL, NULL);
		out[i] = len > 0 ? malloc((size_t)len) : NULL;
		if (!out[i] || WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, out[i], len, NULL, NULL) <= 0) {
			/* Keep the ANSI arguments; what was made for these goes. */
			while (i >= 0)
				free(out[i--]);
			free(out);
			LocalFree(wargv);
			return;
		}
	}
	LocalFree(wargv);
	if (out) {
		*argc = n;
		*argv = out;
	}
}

void cfa_plat_kill_self(void)
{
	/* 137 is what a shell reports for a process ended by SIGKILL (128 +
	 * 9). */
	TerminateProcess(GetCurrentProcess(), 137);
}
