/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the harness's guest programs (ap_oom, ap_numa,
 * ap_pressure): the sysctl paths, reading and writing small procfs, sysfs
 * and cgroup files, and a monotonic clock in milliseconds.
 */
#ifndef AP_UTIL_H
#define AP_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE		15
#endif

#define SYSCTL_ENABLE		"/proc/sys/vm/anon_prefault"
#define SYSCTL_MAX_PAGES	"/proc/sys/vm/anon_prefault_max_pages"

/* Read up to @size - 1 bytes of @path, NUL-terminated; -1 on error. */
static inline ssize_t read_file(const char *path, char *buf, size_t size)
{
	ssize_t len = 0, ret;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	while ((size_t)len < size - 1) {
		ret = read(fd, buf + len, size - 1 - len);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			break;
		len += ret;
	}
	close(fd);
	buf[len] = '\0';
	return len;
}

/* Write @val to @path with one write(); 0 or -errno. */
static inline int write_file(const char *path, const char *val)
{
	ssize_t len = strlen(val);
	int fd, err = 0;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, len) != len)
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

/* Write the number @val to @path; a failure is reported as a diagnostic. */
static inline bool write_long(const char *path, long val)
{
	char buf[32];
	int err;

	snprintf(buf, sizeof(buf), "%ld", val);
	err = write_file(path, buf);
	if (err)
		diag("writing %s to %s: %s\n", buf, path, strerror(-err));
	return !err;
}

/* The number at the start of @path, -1 if it cannot be read. */
static inline long read_long(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/*
 * The value of the line "@key value" (or "@key: value", as in
 * /proc/PID/status) of the file at @path, -1 if absent.
 */
static inline long read_key(const char *path, const char *key)
{
	static char buf[32768];
	size_t klen = strlen(key);
	char *s;

	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (s = buf; *s; ) {
		if (!strncmp(s, key, klen) && (s[klen] == ' ' || s[klen] == ':'))
			return strtol(s + klen + 1, NULL, 10);
		s = strchr(s, '\n');
		if (!s)
			break;
		s++;
	}
	return -1;
}

static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif /* AP_UTIL_H */
