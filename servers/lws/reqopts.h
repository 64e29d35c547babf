/*
 * The echo server's request-path options, with no sockets or lws: ?fragments=N,
 * ?serve=NAME&bytes=N and ?stall=MS (see README.md).  echo.c hands over the query's
 * name=value arguments as lws split and decoded them; the fuzz target
 * (fuzz/) calls the same function.
 */
#ifndef WSBENCH_REQOPTS_H
#define WSBENCH_REQOPTS_H

#include <stddef.h>

#define MAX_FRAGMENTS 64
#define REQOPTS_MAX_ARGS 32
#define MAX_STALL_MS 60000

struct reqopts {
	unsigned frags;		/* frames per echo, 1..MAX_FRAGMENTS (1: none asked) */
	int serve;		/* ?serve= given: reply with a prepared message */
	char serve_name[16];
	size_t serve_bytes;	/* 1..max_bytes */
	unsigned stall_ms;	/* ?stall=: read nothing this long after the upgrade (0: no stall) */
};

/*
 * Fill *o from the query arguments (nargs of them, each "name=value");
 * NULL if they are acceptable, else which option is wrong.  max_bytes bounds
 * bytes= (PREPARED_MAX in the server).
 */
const char *reqopts_parse(const char *const *args, int nargs, size_t max_bytes,
			  struct reqopts *o);

#endif
