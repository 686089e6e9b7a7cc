/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the anon_prefault selftests: the sysctls, read and
 * written with one read()/write() each so that the errno of a rejected
 * write can be checked, saved before a test changes them and restored when
 * it exits. vm.anon_prefault_lazyfree is optional (kernels without it get
 * ordinary dirty speculative pages).
 */
#ifndef __ANON_PREFAULT_UTIL_H
#define __ANON_PREFAULT_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "../kselftest.h"

#define SYSCTL_ENABLE		"/proc/sys/vm/anon_prefault"
#define SYSCTL_MAX_PAGES	"/proc/sys/vm/anon_prefault_max_pages"
#define SYSCTL_LAZYFREE		"/proc/sys/vm/anon_prefault_lazyfree"

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
	char lazyfree[32];
	bool have_lazyfree;
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
	if (ap_saved.have_lazyfree)
		ap_write_file(SYSCTL_LAZYFREE, ap_saved.lazyfree);
}

/* Save the sysctls (fatal if unreadable) and restore them at exit. */
static inline void ap_save_sysctls(void)
{
	if (ap_read_file(SYSCTL_ENABLE, ap_saved.enable,
			 sizeof(ap_saved.enable)))
		ksft_exit_fail_perror("read " SYSCTL_ENABLE);
	if (ap_read_file(SYSCTL_MAX_PAGES, ap_saved.max_pages,
			 sizeof(ap_saved.max_pages)))
		ksft_exit_fail_perror("read " SYSCTL_MAX_PAGES);
	ap_saved.have_lazyfree = !ap_read_file(SYSCTL_LAZYFREE,
					       ap_saved.lazyfree,
					       sizeof(ap_saved.lazyfree));
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

/* Set vm.anon_prefault_lazyfree; fatal on error. */
static inline void ap_set_lazyfree(int mode)
{
	char buf[16];
	int ret;

	snprintf(buf, sizeof(buf), "%d", mode);
	ret = ap_write_file(SYSCTL_LAZYFREE, buf);
	if (ret)
		ksft_exit_fail_msg("writing %s to %s: %s\n", buf,
				   SYSCTL_LAZYFREE, strerror(-ret));
}

#endif /* __ANON_PREFAULT_UTIL_H */
