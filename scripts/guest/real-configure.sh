# SPDX-License-Identifier: GPL-2.0
# A configure-style shell script for the real-workload section of make run
# (run by Debian's dash with GNU sed, grep, mawk and coreutils first in
# PATH): what autoconf scripts do between compiler runs, many short
# processes, pipes, subshells and here-documents. Writes config.h and
# config.mk in the current directory; their content is deterministic.
# $1: number of checks (default 120).

n=${1:-120}
: >config.log
: >config.h
echo "# generated" >config.mk
i=0
while [ "$i" -lt "$n" ]; do
	name="HAVE_FEATURE_$i"
	cat >conftest.c <<CEOF
/* check $i */
#include <stdio.h>
int have_$i(void) { return $i % 7; }
CEOF
	# Macro names and values from the test program, as configure does.
	lower=$(echo "$name" | tr 'A-Z' 'a-z')
	len=$(expr length "$lower")
	funcs=$(grep -c 'have_' conftest.c)
	val=$(sed -n "s/.*return \([0-9]*\) % 7.*/\1/p" conftest.c)
	res=$(echo "$val $len $funcs" | awk '{ print ($1 * 31 + $2 * $3) % 97 }')
	if [ "$(expr "$res" % 3)" -eq 0 ]; then
		echo "#define $name 1" >>config.h
		(echo "checking for $lower... yes ($res)") >>config.log
	else
		echo "/* #undef $name */" >>config.h
		(echo "checking for $lower... no ($res)") >>config.log
	fi
	echo "$lower = $res" | sed 's/ = / := /' >>config.mk
	rm -f conftest.c
	i=$((i + 1))
done
sort config.mk | uniq | wc -l >>config.log
grep -c yes config.log >>config.h
