/*
 * win32_link.c - the Windows side of folder links: an environment's stable
 * path is a junction (a mount-point reparse point), which needs no
 * privilege, unlike a symbolic link.  A junction names its target by an
 * absolute path; it is retargeted in place, so a program never finds the
 * name missing.  Wine 8 keeps no reparse points (FSCTL_SET_REPARSE_POINT
 * fails): there this is ENOTSUP and callers use the numbered folder.
 */
#define WIN32_LEAN_AND_MEAN
#include "platform/platform.h"
#include "platform/win32_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>
#include <winioctl.h>

/* The mount-point form of REPARSE_DATA_BUFFER (the DDK's ntifs.h, which
 * mingw-w64 does not ship to user programs). */
struct mount_point {
	DWORD tag;
	WORD data_length, reserved;
	WORD subst_offset, subst_length, print_offset, print_length;
	WCHAR names[MAXIMUM_REPARSE_DATA_BUFFER_SIZE / sizeof(WCHAR) - 8];
};
#define MOUNT_POINT_HEADER 8 /* tag and the two lengths before the names */

/* dir(link)\name as an absolute path without the \\?\ prefix (malloc). */
static wchar_t *sibling(const char *link, const char *name)
{
	wchar_t *w = cfa_win_widen(link), *wname = cfa_win_widen(name), *slash, *joined = NULL;
	wchar_t *full = NULL;
	size_t n;
	DWORD len;

	if (!w || !wname) {
		free(w);
		free(wname);
		return NULL;
	}
	for (n = 0; w[n]; n++)
		w[n] = w[n] == L'/' ? L'\\' : w[n];
	slash = wcsrchr(w, L'\\');
	if (slash)
		slash[1] = L'\0';
	else
		w[0] = L'\0';
	n = wcslen(w) + wcslen(wname) + 2;
	joined = malloc(n * sizeof(wchar_t));
	if (joined && _snwprintf(joined, n, L"%ls%ls", w, wname) > 0 &&
	    (len = GetFullPathNameW(joined, 0, NULL, NULL)) > 0 &&
	    (full = malloc(((size_t)len + 1) * sizeof(wchar_t))) &&
	    GetFullPathNameW(joined, len + 1, full, NULL) == 0) {
		free(full);
		full = NULL;
	}
	free(w);
	free(wname);
	free(joined);
	return full;
}

/* The reparse data naming target: "\??\C:\..." as the substitute name. */
static bool fill(struct mount_point *mp, const wchar_t *target)
{
	size_t n = wcslen(target);
	size_t subst = (n + 4) * sizeof(WCHAR), print = n * sizeof(WCHAR);

	if (subst + print + 2 * sizeof(WCHAR) > sizeof(mp->names))
		return false;
	memset(mp, 0, sizeof(*mp));
	mp->tag = IO_REPARSE_TAG_MOUNT_POINT;
	memcpy(mp->names, L"\\??\\", 4 * sizeof(WCHAR));
	memcpy(mp->names + 4, target, print);
	mp->subst_length = (WORD)subst;
	mp->print_offset = (WORD)(subst + sizeof(WCHAR));
	mp->print_length = (WORD)print;
	memcpy((char *)mp->names + mp->print_offset, target, print);
	mp->data_length = (WORD)(MOUNT_POINT_HEADER + subst + print + 2 * sizeof(WCHAR));
	return true;
}

static HANDLE open_link(const wchar_t *w, DWORD access)
{
	return CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
	                   OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
	                   NULL);
}

static int set_point(const wchar_t *w, struct mount_point *mp)
{
	HANDLE h = open_link(w, GENERIC_READ | GENERIC_WRITE);
	DWORD got = 0, err = 0;
	REPARSE_GUID_DATA_BUFFER del;

	if (h == INVALID_HANDLE_VALUE)
		return EACCES;
	if (!DeviceIoControl(h, FSCTL_SET_REPARSE_POINT, mp, MOUNT_POINT_HEADER + mp->data_length,
	                     NULL, 0, &got, NULL)) {
		/* A system that takes no new data on an existing junction:
		 * take the old point off, then set the new one. */
		memset(&del, 0, sizeof(del));
		del.ReparseTag = IO_REPARSE_TAG_MOUNT_POINT;
		if (!DeviceIoControl(h, FSCTL_DELETE_REPARSE_POINT, &del,
		                     REPARSE_GUID_DATA_BUFFER_HEADER_SIZE, NULL, 0, &got, NULL) ||
		    !DeviceIoControl(h, FSCTL_SET_REPARSE_POINT, mp,
		                     MOUNT_POINT_HEADER + mp->data_length, NULL, 0, &got, NULL))
			err = GetLastError();
	}
	CloseHandle(h);
	if (!err)
		return 0;
	return err == ERROR_NOT_SUPPORTED || err == ERROR_INVALID_FUNCTION ||
	               err == ERROR_INVALID_PARAMETER
	           ? ENOTSUP
	           : EACCES;
}

int cfa_plat_dir_link(const char *link, const char *name)
{
	wchar_t *w = cfa_win_path(link), *target = sibling(link, name);
	struct mount_point *mp = malloc(sizeof(*mp));
	DWORD attrs;
	bool made = false;
	int rc = ENOMEM;

	if (w && target && mp && fill(mp, target)) {
		attrs = GetFileAttributesW(w);
		if (attrs == INVALID_FILE_ATTRIBUTES)
			made = CreateDirectoryW(w, NULL) != 0;
		/* A real folder of that name is not ours to turn into a link. */
		if (attrs != INVALID_FILE_ATTRIBUTES && !(attrs & FILE_ATTRIBUTE_REPARSE_POINT))
			rc = EEXIST;
		else if (attrs == INVALID_FILE_ATTRIBUTES && !made)
			rc = EACCES;
		else if ((rc = set_point(w, mp)) != 0 && made)
			RemoveDirectoryW(w);
	}
	free(w);
	free(target);
	free(mp);
	return rc;
}

int cfa_plat_dir_link_read(const char *link, char **out)
{
	wchar_t *w = cfa_win_path(link), *subst, *last;
	struct mount_point *mp = malloc(sizeof(*mp));
	HANDLE h = w ? open_link(w, GENERIC_READ) : INVALID_HANDLE_VALUE;
	DWORD got = 0;
	int rc = ENOENT;

	*out = NULL;
	if (h != INVALID_HANDLE_VALUE && mp &&
	    DeviceIoControl(h, FSCTL_GET_REPARSE_POINT, NULL, 0, mp, sizeof(*mp), &got, NULL) &&
	    mp->tag == IO_REPARSE_TAG_MOUNT_POINT &&
	    (size_t)mp->subst_offset + mp->subst_length <= sizeof(mp->names) - sizeof(WCHAR)) {
		subst = (wchar_t *)((char *)mp->names + mp->subst_offset);
		subst[mp->subst_length / sizeof(WCHAR)] = L'\0';
		last = wcsrchr(subst, L'\\');
		rc = (*out = cfa_win_narrow_dup(last ? last + 1 : subst)) ? 0 : ENOMEM;
	}
	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);
	free(w);
	free(mp);
	return rc;
}

int cfa_plat_abs_path(const char *path, char **out)
{
	wchar_t *w = cfa_win_widen(path), *full = NULL;
	DWORD n = w ? GetFullPathNameW(w, 0, NULL, NULL) : 0;

	*out = NULL;
	if (n && (full = malloc(((size_t)n + 1) * sizeof(wchar_t))) &&
	    GetFullPathNameW(w, n + 1, full, NULL) > 0)
		*out = cfa_win_narrow_dup(full);
	free(w);
	free(full);
	return *out ? 0 : ENOMEM;
}
