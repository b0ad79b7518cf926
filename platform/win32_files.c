/*
 * win32_files.c - the Windows side of the seam for files as things rather
 * than contents: removal (past the read-only attribute), that attribute
 * as the store's missing write bit, copies, identity (volume and file
 * index), free space, modification times, why a write failed (a full
 * disk is ENOSPC, as on POSIX), and folders: listing, making, removing.
 */
#define WIN32_LEAN_AND_MEAN
#include "platform/platform.h"
#include "platform/win32_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

/* Seconds between 1601 (FILETIME's epoch) and 1970. */
#define EPOCH_1601_TO_1970 11644473600LL

/* A read-only file: the attribute is cleared through one handle, the file
 * marked for deletion, and the attribute put back when the file has other
 * names (hard links share attributes: a view's entry is the store's file). */
static BOOL remove_read_only(const wchar_t *w)
{
	HANDLE h = CreateFileW(w, DELETE | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES,
	                       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
	                       OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	BY_HANDLE_FILE_INFORMATION info;
	FILE_BASIC_INFO basic, cleared;
	FILE_DISPOSITION_INFO gone = {TRUE};
	BOOL ok;

	if (h == INVALID_HANDLE_VALUE)
		return FALSE;
	ok = GetFileInformationByHandle(h, &info) &&
	     GetFileInformationByHandleEx(h, FileBasicInfo, &basic, sizeof(basic)) &&
	     (basic.FileAttributes & FILE_ATTRIBUTE_READONLY);
	if (ok) {
		/* Times of 0 leave them as they are. */
		basic.CreationTime.QuadPart = basic.LastAccessTime.QuadPart = 0;
		basic.LastWriteTime.QuadPart = basic.ChangeTime.QuadPart = 0;
		cleared = basic;
		cleared.FileAttributes &= ~(DWORD)FILE_ATTRIBUTE_READONLY;
		if (!cleared.FileAttributes)
			cleared.FileAttributes = FILE_ATTRIBUTE_NORMAL;
		ok = SetFileInformationByHandle(h, FileBasicInfo, &cleared, sizeof(cleared)) &&
		     SetFileInformationByHandle(h, FileDispositionInfo, &gone, sizeof(gone));
		if (!ok || info.nNumberOfLinks > 1)
			SetFileInformationByHandle(h, FileBasicInfo, &basic, sizeof(basic));
	}
	CloseHandle(h);
	return ok;
}

int cfa_plat_remove(const char *path)
{
	wchar_t *w = cfa_win_path(path);
	BOOL ok = w && DeleteFileW(w);
	DWORD err = ok ? 0 : GetLastError();

	if (w && !ok)
		ok = err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND ||
		     (err == ERROR_ACCESS_DENIED && remove_read_only(w));
	free(w);
	return ok ? 0 : EACCES;
}

void cfa_plat_set_mode(const char *path, unsigned mode)
{
	wchar_t *w = cfa_win_path(path);
	DWORD now = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES, want;

	if (now != INVALID_FILE_ATTRIBUTES && !(now & FILE_ATTRIBUTE_DIRECTORY)) {
		if (mode & 0200)
			want = now & ~(DWORD)FILE_ATTRIBUTE_READONLY;
		else
			want = (now & ~(DWORD)FILE_ATTRIBUTE_NORMAL) | FILE_ATTRIBUTE_READONLY;
		if (want != now)
			SetFileAttributesW(w, want ? want : FILE_ATTRIBUTE_NORMAL);
	}
	free(w);
}

static int disk_full_or(int code)
{
	DWORD err = GetLastError();
	return err == ERROR_DISK_FULL || err == ERROR_HANDLE_DISK_FULL ? ENOSPC : code;
}

int cfa_plat_copy_file(const char *from, const char *to)
{
	wchar_t *f = cfa_win_path(from), *t = cfa_win_path(to);
	BOOL ok = f && t && CopyFileW(f, t, TRUE);
	int rc = ok ? 0 : disk_full_or(EACCES);

	free(f);
	free(t);
	return rc;
}

int cfa_plat_file_mode(const char *path)
{
	(void)path; /* Windows has attributes and ACLs, not these bits */
	return -1;
}

/* Opened for its identity only: no access to the contents, shared with
 * everyone (a folder needs backup semantics to be opened at all). */
static BOOL file_info(const char *path, BY_HANDLE_FILE_INFORMATION *info)
{
	wchar_t *w = cfa_win_path(path);
	HANDLE h = INVALID_HANDLE_VALUE;
	BOOL ok;

	if (w)
		h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
		                OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return FALSE;
	ok = GetFileInformationByHandle(h, info);
	CloseHandle(h);
	return ok;
}

int cfa_plat_same_file(const char *a, const char *b)
{
	BY_HANDLE_FILE_INFORMATION x, y;

	if (!file_info(a, &x) || !file_info(b, &y))
		return -1;
	return x.dwVolumeSerialNumber == y.dwVolumeSerialNumber &&
	       x.nFileIndexHigh == y.nFileIndexHigh && x.nFileIndexLow == y.nFileIndexLow;
}

int cfa_plat_free_space(const char *path, uint64_t *bytes)
{
	wchar_t *w = cfa_win_path(path);
	ULARGE_INTEGER avail;
	BOOL ok = w && GetDiskFreeSpaceExW(w, &avail, NULL, NULL);

	free(w);
	if (!ok)
		return ENOENT;
	*bytes = (uint64_t)avail.QuadPart;
	return 0;
}

long long cfa_plat_file_mtime(const char *path)
{
	WIN32_FILE_ATTRIBUTE_DATA d;
	wchar_t *w = cfa_win_path(path);
	BOOL ok = w && GetFileAttributesExW(w, GetFileExInfoStandard, &d);
	unsigned long long t;

	free(w);
	if (!ok)
		return -1;
	t = ((unsigned long long)d.ftLastWriteTime.dwHighDateTime << 32) |
	    d.ftLastWriteTime.dwLowDateTime;
	return (long long)(t / 10000000ull) - EPOCH_1601_TO_1970;
}

int cfa_plat_write_errno(void)
{
	return disk_full_or(errno); /* the C library's code, unless the system's says more */
}

struct rm_ctx {
	const char *dir;
	int err;
};

/* a + sep + b in a new allocation (free), or NULL. */
static char *join(const char *a, const char *sep, const char *b)
{
	size_t la = strlen(a), ls = strlen(sep), lb = strlen(b);
	char *out = malloc(la + ls + lb + 1);

	if (out) {
		memcpy(out, a, la);
		memcpy(out + la, sep, ls);
		memcpy(out + la + ls, b, lb + 1);
	}
	return out;
}

bool cfa_plat_is_real_dir(const char *path)
{
	wchar_t *w = cfa_win_path(path);
	DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;

	free(w);
	return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY) &&
	       !(a & FILE_ATTRIBUTE_REPARSE_POINT);
}

/* Removes a junction or a symbolic link to a folder, not what it names. */
static int remove_dir_link(const char *path)
{
	wchar_t *w = cfa_win_path(path);
	int e = !w ? ENOMEM : RemoveDirectoryW(w) ? 0 : EACCES;

	free(w);
	return e;
}

static int rm_one(const char *name, void *arg)
{
	struct rm_ctx *c = arg;
	char *path = join(c->dir, "\\", name);
	int e;

	if (!path)
		e = ENOMEM;
	else if (cfa_plat_is_real_dir(path))
		e = cfa_plat_remove_tree(path);
	else if (cfa_plat_is_dir(path))
		e = remove_dir_link(path); /* a junction: its target is not ours */
	else
		e = cfa_plat_remove(path);
	free(path);
	if (e && !c->err)
		c->err = e;
	return 0;
}

int cfa_plat_remove_tree(const char *path)
{
	struct rm_ctx c = {path, 0};
	wchar_t *w;

	if (!cfa_plat_is_dir(path))
		return 0;
	cfa_plat_list_dir(path, rm_one, &c);
	w = cfa_win_path(path);
	if (!w || (!RemoveDirectoryW(w) && !c.err))
		c.err = EACCES;
	free(w);
	return c.err;
}

int cfa_plat_mkdir_p(const char *path)
{
	size_t i, n = strlen(path);
	char *tmp;
	int rc = 0;

	if (n == 0)
		return ENOENT;
	if (!(tmp = join(path, "", "")))
		return ENOMEM;
	for (i = 1; i <= n && !rc; i++) {
		wchar_t *w;
		if (tmp[i] != '/' && tmp[i] != '\\' && tmp[i] != '\0')
			continue;
		if (i == 2 && tmp[1] == ':')
			continue; /* "C:\" is a drive, not a folder to create */
		tmp[i] = '\0';
		w = cfa_win_path(tmp);
		if (!w)
			rc = EINVAL;
		else if (!CreateDirectoryW(w, NULL) && GetLastError() != ERROR_ALREADY_EXISTS)
			rc = EACCES;
		free(w);
		tmp[i] = path[i];
	}
	free(tmp);
	return rc ? rc : cfa_plat_is_dir(path) ? 0 : ENOTDIR;
}

int cfa_plat_list_dir(const char *path, int (*fn)(const char *name, void *arg), void *arg)
{
	char *pattern = join(path, "\\", "*");
	wchar_t *w = pattern ? cfa_win_path(pattern) : NULL;
	WIN32_FIND_DATAW fd;
	HANDLE h;
	int rc = !pattern ? ENOMEM : !w ? EINVAL : 0;

	free(pattern);
	if (rc)
		return rc;
	h = FindFirstFileW(w, &fd);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return ENOENT;
	do {
		char *name;
		if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
			continue;
		/* Every entry is passed on: one left out would look absent. */
		if (!(name = cfa_win_narrow_dup(fd.cFileName))) {
			rc = ENOMEM;
			break;
		}
		rc = fn(name, arg);
		free(name);
	} while (rc == 0 && FindNextFileW(h, &fd));
	FindClose(h);
	return rc;
}
