/*
 * platform.h - the seam between cfapkg and the operating system.  Only
 * platform/ may test _WIN32; everything else calls these functions.  Paths
 * are UTF-8 everywhere; the Windows backend converts to UTF-16 at the call.
 */
#ifndef CFA_PLATFORM_H
#define CFA_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "linux" or "windows", and the CPU architecture ("x86_64", "aarch64"). */
const char *cfa_plat_os(void);
const char *cfa_plat_arch(void);

/* The version of the libsolv the process runs with (its solv_version: a
 * datum, which a library loaded on first use cannot stand in for). */
const char *cfa_plat_solv_version(void);

/* Separator of path lists in environment variables (':' or ';'). */
char cfa_plat_path_list_sep(void);

/* Text the platform hands out (paths, names, values) has no length limit:
 * it is allocated with malloc and freed with free (not cfa_free: this room
 * sits below core/).  ENOMEM when it cannot be. */

/* The user data folder for cfapkg: $XDG_DATA_HOME/cfapkg,
 * ~/.local/share/cfapkg, or %LOCALAPPDATA%\cfapkg.  0, ENOENT (none of
 * them is set) or ENOMEM. */
int cfa_plat_data_dir(char **out);

/* The user configuration folder for cfapkg: $XDG_CONFIG_HOME/cfapkg (an
 * absolute one), ~/.config/cfapkg, or %APPDATA%\cfapkg.  0, ENOENT (none
 * of them is set) or ENOMEM. */
int cfa_plat_config_dir(char **out);
/* The machine's configuration folder for cfapkg: /etc/cfapkg, or
 * %ProgramData%\cfapkg.  0, ENOENT or ENOMEM. */
int cfa_plat_system_config_dir(char **out);

/* Folders other programs keep their caches under, found the way they find
 * them (Python's pathlib and tempfile, Rust's dirs, LLVM), for listing
 * and clearing those caches:
 *   CFA_USER_HOME   $HOME (else the password database); %USERPROFILE%
 *   CFA_USER_CACHE  $XDG_CACHE_HOME (an absolute one), else ~/.cache;
 *                   %LOCALAPPDATA%
 *   CFA_USER_TEMP   the first of $TMPDIR, $TEMP, $TMP that is a folder,
 *                   else /tmp; else GetTempPathW's folder
 * 0, ENOENT (not known here) or ENOMEM. */
enum cfa_user_dir { CFA_USER_HOME, CFA_USER_CACHE, CFA_USER_TEMP };
int cfa_plat_user_dir(enum cfa_user_dir which, char **out);
/* The user's name as Python's getpass.getuser() finds it: $LOGNAME,
 * $USER, $LNAME, $USERNAME, then (POSIX) the password database.  0,
 * ENOENT or ENOMEM. */
int cfa_plat_user_name(char **out);
/* A folder itself, not a symbolic link (or Windows junction) to one. */
bool cfa_plat_is_real_dir(const char *path);

/* The folder of the running executable.  0 or errno-style. */
int cfa_plat_exe_dir(char **out);

bool cfa_plat_is_file(const char *path);
bool cfa_plat_is_dir(const char *path);

/* Whether a stream is a terminal. */
bool cfa_plat_isatty(FILE *f);
/* A terminal's width in columns; 0 when f is none or it does not say. */
unsigned cfa_plat_term_columns(FILE *f);

/* fopen with a UTF-8 path. */
FILE *cfa_plat_fopen(const char *path, const char *mode);

/* A new file for writing that only its owner may read, created so from
 * its first moment (no window between create and chmod), never through a
 * link planted at path; a file already there is removed first.  On
 * Windows the file takes its folder's ACL. */
FILE *cfa_plat_fopen_private(const char *path);

/* Opens a file for reading that others may go on writing, rename or
 * remove meanwhile (Windows refuses those by default). */
FILE *cfa_plat_fopen_shared(const char *path);

/* A file mapped read-only one window at a time, to read its bytes in
 * place while the process's resident size stays one window.  open gives
 * NULL where the file cannot be mapped (an empty one, say): read it then.
 * view maps len bytes at offset (a multiple of CFA_MAP_ALIGN) in place of
 * the previous window; NULL on failure. */
#define CFA_MAP_ALIGN (64u * 1024u)
struct cfa_map;
struct cfa_map *cfa_plat_map_open(const char *path, uint64_t *size);
const void *cfa_plat_map_view(struct cfa_map *m, uint64_t offset, size_t len);
void cfa_plat_map_close(struct cfa_map *m);

/* A file read at offsets without stdio's buffer: each piece is one system
 * call into memory of the caller's, and no buffer of its own is touched
 * (caches are read this way on every command).  open gives NULL and says
 * why in *kind: CFA_RFILE_ERROR (errno set), CFA_RFILE_DIR, or
 * CFA_RFILE_OTHER for what is not a regular file (a pipe, a device: never
 * read, so that a wrong path cannot hang or flood a reader).  read gives
 * the bytes read at offset, fewer only at the end or on an error. */
enum cfa_rfile_kind { CFA_RFILE_FILE, CFA_RFILE_ERROR, CFA_RFILE_DIR, CFA_RFILE_OTHER };
struct cfa_rfile;
struct cfa_rfile *cfa_plat_rfile_open(const char *path, uint64_t *size,
                                      enum cfa_rfile_kind *kind);
size_t cfa_plat_rfile_read(struct cfa_rfile *f, void *buf, size_t n, uint64_t offset);
/* n bytes at offset into buf, then the m bytes after them into more:
 * one system call where the system reads into two buffers at once.
 * True when both were read whole. */
bool cfa_plat_rfile_read2(struct cfa_rfile *f, void *buf, size_t n, void *more, size_t m,
                          uint64_t offset);
void cfa_plat_rfile_close(struct cfa_rfile *f);

/* While on, memory freed stays with the process rather than going back
 * to the system, to be used again without a page fault per page (glibc
 * gives back the top of its heap past 128 KiB; off restores that).  For a
 * parse that frees and allocates the same amount over and over. */
void cfa_plat_keep_freed_memory(bool on);

/* Flushes a file's data to the disk.  0 or errno-style. */
int cfa_plat_fsync(FILE *f);
/* Starts writing a growing file's data to the disk without waiting, so
 * that the fsync at its end has little left to do (no-op where the system
 * has no such call). */
void cfa_plat_start_writeback(FILE *f);
/* Renames over an existing file atomically.  0 or errno-style. */
int cfa_plat_rename(const char *from, const char *to);
/* Swaps two existing names in one step (Linux's RENAME_EXCHANGE), so that
 * neither stands empty at any moment.  0, or errno-style where the system
 * or its file system cannot (Windows always): the caller then renames. */
int cfa_plat_exchange(const char *a, const char *b);
/* Removes a file; a missing file is not an error, nor a read-only one
 * (Windows: the attribute is cleared for the removal and kept on the
 * file's other hard links).  0 or errno-style. */
int cfa_plat_remove(const char *path);
/* Size of a file in bytes, or -1 when it does not exist. */
long long cfa_plat_file_size(const char *path);
/* Makes the entries of a folder durable (no-op where not needed). */
void cfa_plat_sync_dir(const char *path);
/* Whether one cfa_plat_sync_dir makes every rename and folder link made
 * in the folder before it durable together (POSIX: the folder's fsync).
 * Where not (Windows: each rename writes through alone, a junction's new
 * target is not flushed), a record is flushed as it is written. */
bool cfa_plat_sync_dir_covers_links(void);

/* Makes a symbolic link (ENOSYS where links need a privilege: Windows). */
int cfa_plat_symlink(const char *target, const char *path);
/* Points link at the folder name beside it (both in one folder), replacing
 * what link named in one step: a symbolic link to "name" renamed over link
 * (POSIX), a junction retargeted in place (Windows).  ENOTSUP where the
 * file system holds no such links (FAT, Wine 8); nothing is left at link
 * then.  0 or errno-style. */
int cfa_plat_dir_link(const char *link, const char *name);
/* The name of the folder link points at (*out, free), ENOENT when link is
 * no such link. */
int cfa_plat_dir_link_read(const char *link, char **out);
/* path made absolute (*out, free); it need not exist.  0 or errno-style. */
int cfa_plat_abs_path(const char *path, char **out);
/* Makes a hard link path to the existing file target (no privilege needed
 * on either system).  0 or errno-style (EXDEV across file systems). */
int cfa_plat_hardlink(const char *target, const char *path);
/* Copies a file's bytes and permissions to path (which must not exist).
 * 0 or errno-style. */
int cfa_plat_copy_file(const char *from, const char *to);
/* Sets a file's permission bits.  Windows keeps only the owner's write
 * bit, as the read-only attribute (which cfa_plat_remove clears). */
void cfa_plat_set_mode(const char *path, unsigned mode);
/* 1 when a and b are the same file (following symbolic links: device and
 * inode; on Windows volume serial number and file index), 0 when they are
 * not, -1 when either cannot be examined. */
int cfa_plat_same_file(const char *a, const char *b);
/* Bytes free to this user on the file system holding path (an existing
 * file or folder).  0 or errno-style. */
int cfa_plat_free_space(const char *path, uint64_t *bytes);
/* When a file was last written, in seconds since 1970 (UTC), or -1 when
 * it does not exist. */
long long cfa_plat_file_mtime(const char *path);
/* The errno-style code of the write that just failed (fwrite, fflush,
 * fclose, cfa_plat_fsync): read it before any other call.  A full disk is
 * ENOSPC on every system (Windows: ERROR_DISK_FULL, ERROR_HANDLE_DISK_FULL). */
int cfa_plat_write_errno(void);
/* Makes the calling thread's character conversions UTF-8 until
 * cfa_plat_utf8_end(token): libarchive turns entry names into the
 * locale's characters, and under the C locale a name such as "日本語"
 * cannot be turned into anything.  Only this thread is affected; a
 * library must not change a process's locale.  No-op on Windows, where
 * libarchive converts names through UTF-16. */
void *cfa_plat_utf8_begin(void);
void cfa_plat_utf8_end(void *token);
/* A file's permission bits (not following a last symbolic link), or -1
 * where it is missing or the system keeps no such bits (Windows). */
int cfa_plat_file_mode(const char *path);
/* One look at path (not following a last symbolic link): true when it is a
 * regular file, with its size and permission bits (-1 where the system has
 * none: Windows). */
bool cfa_plat_regular_file(const char *path, long long *size, int *mode);
/* The same for dir/rel, the folder opened once (fewer path lookups when
 * many files of one folder are looked at).  NULL from open: no memory or
 * no such folder. */
struct cfa_dir;
struct cfa_dir *cfa_plat_dir_open(const char *path);
bool cfa_plat_regular_file_at(struct cfa_dir *d, const char *rel, long long *size, int *mode);
void cfa_plat_dir_close(struct cfa_dir *d);
/* Hard-links from/from_name as to/to_name, names within the opened
 * folders.  0 or errno-style, as cfa_plat_hardlink. */
int cfa_plat_hardlink_at(struct cfa_dir *from, const char *from_name, struct cfa_dir *to,
                         const char *to_name);
/* Flushes every file of the file system holding path to the disk. */
void cfa_plat_sync_fs(const char *path);
/* Eight hex digits naming this boot of the machine, the same for every
 * process until it restarts; false where the system gives none (Windows:
 * there each download is flushed to the disk instead). */
bool cfa_plat_boot_id(char out[9]);
/* A text that changes whenever the file's contents may have (its size and
 * modification time to the system's finest unit); false when it cannot be
 * read. */
bool cfa_plat_file_stamp(const char *path, char out[64]);
/* The same for dir/rel ("" is the folder itself), the folder opened once
 * with cfa_plat_dir_open: a store folder's seal stamps a hundred of its
 * folders or more, and each full path was looked up from the root. */
bool cfa_plat_file_stamp_at(struct cfa_dir *d, const char *rel, char out[64]);
/* Removes a folder and everything in it.  0 or errno-style. */
int cfa_plat_remove_tree(const char *path);

/* Creates a folder and its parents.  0 on success, else errno-style. */
int cfa_plat_mkdir_p(const char *path);

/* Calls fn for each entry name (no "." or ".."), in no set order.  Returns
 * 0, an errno-style code for the folder, or fn's first non-zero result. */
int cfa_plat_list_dir(const char *path, int (*fn)(const char *name, void *arg), void *arg);

/* Replaces argv with the command line in UTF-8 (Windows passes main() the
 * ANSI code page) and makes the console take UTF-8.  No-op elsewhere.
 * The new argv lives until the process ends. */
void cfa_plat_utf8_args(int *argc, char ***argv);

/* Seconds on a monotonic clock. */
double cfa_plat_now(void);

/* Sleeps for ms milliseconds. */
void cfa_plat_sleep_ms(unsigned ms);

/* An exclusive lock on a file (created if missing), held until released
 * or the process ends, whichever comes first (a killed holder frees it).
 * Waits up to timeout_ms; ETIMEDOUT when another holder kept it. */
struct cfa_lock;
int cfa_plat_lock(const char *path, unsigned timeout_ms, struct cfa_lock **out);
void cfa_plat_unlock(struct cfa_lock *lock);

/* A thread running fn(arg), and waiting for it to end. */
struct cfa_thread;
int cfa_plat_thread_start(void (*fn)(void *), void *arg, struct cfa_thread **out);
void cfa_plat_thread_join(struct cfa_thread *t);

/* A lock for the few places threads share state.  NULL when out of
 * memory (lock and unlock then do nothing). */
struct cfa_mutex;
struct cfa_mutex *cfa_plat_mutex_new(void);
void cfa_plat_mutex_lock(struct cfa_mutex *m);
void cfa_plat_mutex_unlock(struct cfa_mutex *m);
void cfa_plat_mutex_free(struct cfa_mutex *m);
/* A condition threads wait on while holding a mutex; NULL when out of
 * memory.  Wakeups may be spurious: wait in a loop on the state. */
struct cfa_cond;
struct cfa_cond *cfa_plat_cond_new(void);
void cfa_plat_cond_wait(struct cfa_cond *c, struct cfa_mutex *m);
void cfa_plat_cond_broadcast(struct cfa_cond *c);
void cfa_plat_cond_free(struct cfa_cond *c);

/* Processors available to this process (at least 1). */
unsigned cfa_plat_cpu_count(void);

/* Runs fn on each of n items (item i at base + i * size) in parallel
 * threads and waits for all; an item whose thread cannot be started runs
 * in the calling thread. */
void cfa_plat_parallel(void (*fn)(void *item), void *base, size_t size, size_t n);

/* Runs a program (argv[0] a path) with its standard output captured (at
 * most len-1 bytes kept, NUL-terminated) and standard input empty; kills it
 * after timeout_ms.  0 when it ran to its end (its exit status in *status),
 * ETIMEDOUT when it was killed, else an errno-style code.  On Windows the
 * program shows no error dialogs (a crash ends it, its status the
 * exception code); a POSIX crash gives status 128 + the signal. */
int cfa_plat_run_capture(const char *const *argv, unsigned timeout_ms, char *out, size_t len,
                         int *status);

/* Sets (value NULL: removes) an environment variable of this process,
 * which children inherit.  0 or errno-style. */
int cfa_plat_setenv(const char *name, const char *value);
/* Runs argv[0] (a path) with argv, inheriting the standard streams and
 * the environment.  POSIX replaces this process (returns only on failure);
 * Windows waits and puts the exit status in *status.  0 or errno-style. */
int cfa_plat_exec(const char *const *argv, int *status);

/* An environment variable in UTF-8, copied into buf; NULL when unset, or
 * when it does not fit (for short values: numbers, switches). */
const char *cfa_plat_getenv(const char *name, char *buf, size_t len);
/* The same, whole, for values of any length (PATH, folders): 0, ENOENT
 * when unset, or ENOMEM. */
int cfa_plat_getenv_dup(const char *name, char **out);

/* The OS and its build ("Windows 10.0.26100"), "" when unknown. */
void cfa_plat_os_build(char *buf, size_t len);

/* The version of the GNU C library this process runs on ("2.36"); false
 * where it is not glibc (Windows, musl) or the text does not fit. */
bool cfa_plat_glibc_version(char *buf, size_t len);

/* Windows only (ENOSYS or 0 results elsewhere): */
/* A string value under HKEY_LOCAL_MACHINE\key.  0 or errno-style. */
int cfa_plat_reg_string(const char *key, const char *value, char **out);
/* Calls fn with each subkey name of HKEY_LOCAL_MACHINE\key. */
int cfa_plat_reg_subkeys(const char *key, int (*fn)(const char *name, void *arg), void *arg);
/* The system folder (System32). */
int cfa_plat_system_dir(char **out);
/* The version resource of a program or library ("10.0.3679.0"). */
int cfa_plat_file_version(const char *path, char *buf, size_t len);

struct cfa_plat_adapter {
	char description[3 * 128 + 1]; /* DXGI's 128 UTF-16 units, as UTF-8 */
	unsigned vendor, device, subsys, revision;
	unsigned long long dedicated_memory;
};
/* Display adapters DXGI reports; how many were written. */
size_t cfa_plat_adapters(struct cfa_plat_adapter *out, size_t max);

/* Ends this process at once, as SIGKILL would: no cleanup, no flush. */
void cfa_plat_kill_self(void);


/* Text for an errno-style code from the functions above ("no space left
 * on device" for ENOSPC). */
const char *cfa_plat_strerror(int code);

#endif
