#include "reqopts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* the value of the first argument named `name` (with its '='), or NULL */
static const char *arg_value(const char *const *args, int nargs,
			     const char *name)
{
	size_t nl = strlen(name);
	int i;

	for (i = 0; i < nargs; i++)
		if (!strncmp(args[i], name, nl))
			return args[i] + nl;
	return NULL;
}

/* a whole decimal number (strtoll's syntax) in lo..hi, or -1 */
static long long number_in(const char *v, long long lo, long long hi)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (end == v || *end || errno || n < lo || n > hi)
		return -1;
	return n;
}

const char *reqopts_parse(const char *const *args, int nargs, size_t max_bytes,
			  struct reqopts *o)
{
	const char *frags, *name, *bytes, *stall;
	long long n;

	memset(o, 0, sizeof(*o));
	o->frags = 1;
	if (nargs > REQOPTS_MAX_ARGS)
		return "too many query arguments";
	frags = arg_value(args, nargs, "fragments=");
	if (frags) {
		if ((n = number_in(frags, 1, MAX_FRAGMENTS)) < 0)
			return "bad fragments=";
		o->frags = (unsigned)n;
	}
	stall = arg_value(args, nargs, "stall=");
	if (stall) {
		if ((n = number_in(stall, 1, MAX_STALL_MS)) < 0)
			return "bad stall=";
		o->stall_ms = (unsigned)n;
	}
	name = arg_value(args, nargs, "serve=");
	bytes = arg_value(args, nargs, "bytes=");
	if (!name && !bytes)
		return NULL;
	/* both, and nothing else in the query */
	if (!name || !bytes || nargs != 2)
		return "bad serve=/bytes=";
	if (strlen(name) >= sizeof(o->serve_name))
		return "bad serve=/bytes=";
	if ((n = number_in(bytes, 1, (long long)max_bytes)) < 0)
		return "bad serve=/bytes=";
	strcpy(o->serve_name, name);
	o->serve_bytes = (size_t)n;
	o->serve = 1;
	return NULL;
}
