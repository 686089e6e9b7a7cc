/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the anon_prefault selftests: the two sysctls, read and
 * written with one read()/write() each so that the errno of a rejected
 * write can be checked, saved before a test changes them and restored when
 * it exits; and swap on a RAM disk, for the tests that need reclaim to
 * move written anonymous pages out of memory and back.
 */
#ifndef __ANON_PREFAULT_UTIL_H
#define __ANON_PREFAULT_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/swap.h>
#include "../kselftest.h"

#define SYSCTL_ENABLE		"/proc/sys/vm/anon_prefault"
#define SYSCTL_MAX_PAGES	"/proc/sys/vm/anon_prefault_max_pages"

/* The RAM disk (brd) that the tests use as swap if none is active. */
#define AP_SWAP_DEV		"/dev/ram0"

/* Write @s to @path with a single write(); returns 0 or -errno. */
static inline int ap_write_file(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t ret;
	int fd, err = 0;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, s, len);
	if (ret < 0)
		err = -errno;
	else if ((size_t)ret != len)
		err = -EIO;
	close(fd);
	return err;
}

/* Read up to @len - 1 bytes of @path, trailing newline stripped. */
static inline int ap_read_file(const char *path, char *buf, size_t len)
{
	ssize_t ret;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	ret = read(fd, buf, len - 1);
	close(fd);
	if (ret < 0)
		return -errno;
	buf[ret] = '\0';
	while (ret > 0 && buf[ret - 1] == '\n')
		buf[--ret] = '\0';
	return 0;
}

static struct {
	char enable[32];
	char max_pages[32];
	pid_t owner;
} ap_saved;

/*
 * Put both sysctls back as ap_save_sysctls() found them. Only the process
 * that saved them restores (never a forked child), and only write() is
 * used, so this is safe in an atexit() handler and in a signal handler.
 */
static inline void ap_restore_sysctls(void)
{
	if (!ap_saved.owner || getpid() != ap_saved.owner)
		return;
	ap_write_file(SYSCTL_MAX_PAGES, ap_saved.max_pages);
	ap_write_file(SYSCTL_ENABLE, ap_saved.enable);
}

/* Save both sysctls (fatal if unreadable) and restore them at exit. */
static inline void ap_save_sysctls(void)
{
	if (ap_read_file(SYSCTL_ENABLE, ap_saved.enable,
			 sizeof(ap_saved.enable)))
		ksft_exit_fail_perror("read " SYSCTL_ENABLE);
	if (ap_read_file(SYSCTL_MAX_PAGES, ap_saved.max_pages,
			 sizeof(ap_saved.max_pages)))
		ksft_exit_fail_perror("read " SYSCTL_MAX_PAGES);
	ap_saved.owner = getpid();
	atexit(ap_restore_sysctls);
}

/* Set both sysctls; any failure is fatal. */
static inline void ap_set_sysctls(int enable, int max_pages)
{
	const char *path[2] = { SYSCTL_MAX_PAGES, SYSCTL_ENABLE };
	int val[2] = { max_pages, enable };
	char buf[16];
	int i, ret;

	for (i = 0; i < 2; i++) {
		snprintf(buf, sizeof(buf), "%d", val[i]);
		ret = ap_write_file(path[i], buf);
		if (ret)
			ksft_exit_fail_msg("writing %s to %s: %s\n", buf,
					   path[i], strerror(-ret));
	}
}

/* The swap device ap_swap_on() enabled, to be disabled at exit. */
static char ap_swap_dev[64];
static pid_t ap_swap_owner;

/* True if any swap area is active. */
static inline bool ap_swap_active(void)
{
	char buf[4096];

	if (ap_read_file("/proc/swaps", buf, sizeof(buf)))
		return false;
	return !!strchr(buf, '\n');
}

static inline void ap_swap_off(void)
{
	if (!ap_swap_dev[0] || getpid() != ap_swap_owner)
		return;
	if (swapoff(ap_swap_dev))
		ksft_print_msg("swapoff %s: %s\n", ap_swap_dev, strerror(errno));
	ap_swap_dev[0] = '\0';
}

/*
 * Make sure swap is active: if none is, write a swap header (version 1,
 * no bad pages) to the block device @dev, a RAM disk, and swapon() it; it
 * is swapped off again at exit. Returns 0 or -errno, with @why saying
 * what failed.
 */
static inline int ap_swap_on(const char *dev, const char **why)
{
	long psz = sysconf(_SC_PAGESIZE);
	off_t bytes;
	unsigned int *info;
	char *hdr;
	int fd, err = 0;

	if (ap_swap_active())
		return 0;
	*why = dev;
	fd = open(dev, O_RDWR);
	if (fd < 0)
		return -errno;
	hdr = calloc(1, psz);
	if (!hdr) {
		close(fd);
		return -ENOMEM;
	}
	bytes = lseek(fd, 0, SEEK_END);
	if (bytes < 16 * psz) {
		err = bytes < 0 ? -errno : -ENOSPC;
		*why = "the size of the device";
		goto out;
	}
	/* struct swap_header_v1_2: version, last_page, nr_badpages. */
	info = (unsigned int *)(hdr + 1024);
	info[0] = 1;
	info[1] = bytes / psz - 1;
	memcpy(hdr + psz - 10, "SWAPSPACE2", 10);
	errno = 0;
	if (pwrite(fd, hdr, psz, 0) != psz || fsync(fd)) {
		err = errno ? -errno : -EIO;
		*why = "writing the swap header";
		goto out;
	}
	if (swapon(dev, 0)) {
		err = -errno;
		*why = "swapon";
		goto out;
	}
	snprintf(ap_swap_dev, sizeof(ap_swap_dev), "%s", dev);
	ap_swap_owner = getpid();
	atexit(ap_swap_off);
out:
	free(hdr);
	close(fd);
	return err;
}

/* The alignment of ap_map_region(): a PMD with 4 KiB pages on x86-64. */
#define AP_REGION_ALIGN		(2UL << 20)

/*
 * Map @len bytes of private anonymous memory with @prot at an
 * AP_REGION_ALIGN aligned address, followed by a PROT_NONE guard page, so
 * that the region is a VMA of its own that cannot merge with a later
 * mapping. Returns NULL with errno set and *@what naming the call that
 * failed.
 */
static inline char *ap_map_region(size_t len, int prot, const char **what)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	size_t map_len = len + AP_REGION_ALIGN + psz;
	char *map, *p, *end;

	*what = "mmap";
	map = mmap(NULL, map_len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)map + AP_REGION_ALIGN - 1) &
		     ~(AP_REGION_ALIGN - 1));
	end = p + len + psz;
	*what = "munmap";
	if (p > map && munmap(map, p - map))
		return NULL;
	if (map + map_len > end && munmap(end, map + map_len - end))
		return NULL;
	*what = "mprotect";
	if (mprotect(p + len, psz, PROT_NONE))
		return NULL;
	return p;
}

/* xorshift64 over *@state: a fixed seed makes a run reproducible. */
static inline unsigned long ap_rng(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (unsigned long)*state;
}

/* Shuffle @a[0..n) (Fisher-Yates), drawing from ap_rng(@state). */
static inline void ap_shuffle(unsigned long *a, unsigned long n,
			      uint64_t *state)
{
	unsigned long i, j, t;

	for (i = n; i > 1; i--) {
		j = ap_rng(state) % i;
		t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

/*
 * Fill @a with pages of [0, @pages) chosen at random (ap_shuffle() from
 * @state), no two of them neighbours, in random order, and return how many:
 * no fault on them lands next to an earlier one, so none can continue a
 * stream of faults in either direction.
 */
static inline unsigned long ap_random_apart(unsigned long *a,
					    unsigned long pages,
					    uint64_t *state)
{
	unsigned char *taken = calloc(pages, 1);
	unsigned long i, n = 0;

	if (!taken)
		ksft_exit_fail_perror("calloc");
	for (i = 0; i < pages; i++)
		a[i] = i;
	ap_shuffle(a, pages, state);
	for (i = 0; i < pages; i++) {
		unsigned long pg = a[i];

		if ((pg && taken[pg - 1]) || (pg + 1 < pages && taken[pg + 1]))
			continue;
		taken[pg] = 1;
		a[n++] = pg;
	}
	free(taken);
	return n;
}

/*
 * The setting a sysfs choice file selects ("always [inherit] madvise never":
 * the bracketed one), copied to @val (@len bytes, truncated). Returns 0, or
 * -errno when @path cannot be read, -EINVAL when nothing is selected.
 */
static inline int ap_sysfs_selected(const char *path, char *val, size_t len)
{
	char buf[128], *b, *e;
	int ret = ap_read_file(path, buf, sizeof(buf));

	if (ret)
		return ret;
	b = strchr(buf, '[');
	e = b ? strchr(b, ']') : NULL;
	if (!e)
		return -EINVAL;
	*e = '\0';
	snprintf(val, len, "%s", b + 1);
	return 0;
}

/* mTHP sizes whose "enabled" setting ap_mthp_only() changed. */
#define AP_THP_DIR		"/sys/kernel/mm/transparent_hugepage"
#define AP_THP_SIZES		16

static struct {
	char name[AP_THP_SIZES][32];	/* "hugepages-64kB" */
	char val[AP_THP_SIZES][16];	/* "always", "madvise", ... */
	unsigned int nr;
	pid_t owner;
} ap_thp_saved;

/* Put the mTHP settings back as ap_mthp_only() found them. */
static inline void ap_mthp_restore(void)
{
	char path[128];
	unsigned int i;

	if (!ap_thp_saved.owner || getpid() != ap_thp_saved.owner)
		return;
	for (i = 0; i < ap_thp_saved.nr; i++) {
		snprintf(path, sizeof(path), AP_THP_DIR "/%s/enabled",
			 ap_thp_saved.name[i]);
		ap_write_file(path, ap_thp_saved.val[i]);
	}
}

/*
 * Set the @n anonymous mTHP sizes @kb (KiB) to @policy ("always", "auto",
 * ...) and every other size (the PMD size included) to "never". The
 * settings are saved the first time and restored at exit. Returns 0, or
 * -errno if a size does not exist or a setting cannot be written.
 */
static inline int ap_mthp_set(const unsigned int *kb, unsigned int n,
			      const char *policy)
{
	char path[128], name[32];
	bool first = !ap_thp_saved.owner;
	unsigned int found = 0, k;
	struct dirent *de;
	int ret = 0;
	DIR *d;

	d = opendir(AP_THP_DIR);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned int i = ap_thp_saved.nr;

		if (strncmp(de->d_name, "hugepages-", 10))
			continue;
		snprintf(path, sizeof(path), AP_THP_DIR "/%.32s/enabled",
			 de->d_name);
		/* A size only shmem may use has no anonymous setting */
		if (access(path, F_OK))
			continue;
		if (first && i < AP_THP_SIZES &&
		    !ap_sysfs_selected(path, ap_thp_saved.val[i],
				       sizeof(ap_thp_saved.val[i]))) {
			snprintf(ap_thp_saved.name[i],
				 sizeof(ap_thp_saved.name[i]), "%.31s",
				 de->d_name);
			ap_thp_saved.nr++;
		}
		for (k = 0; k < n; k++) {
			snprintf(name, sizeof(name), "hugepages-%ukB", kb[k]);
			if (!strcmp(de->d_name, name))
				break;
		}
		found += k < n;
		ret = ap_write_file(path, k < n ? policy : "never");
		if (ret)
			break;
	}
	closedir(d);
	if (first) {
		ap_thp_saved.owner = getpid();
		atexit(ap_mthp_restore);
	}
	return ret ?: (found == n ? 0 : -ENOENT);
}

/* Set anonymous mTHP of @kb KiB only to @policy (ap_mthp_set()). */
static inline int ap_mthp_only(unsigned int kb, const char *policy)
{
	return ap_mthp_set(&kb, 1, policy);
}

#endif /* __ANON_PREFAULT_UTIL_H */
