#include "kinds.h"
#include "utf8.h"
#include "util.h"

/* Same text as clients/workload.js: printable ASCII, bytes == characters. */
static const char ascii[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

unsigned char *make_payload(const struct opts *o)
{
	unsigned char *p = xmalloc(o->size);
	size_t i;

	if (o->binary) {
		for (i = 0; i < o->size; i++)
			p[i] = (unsigned char)i;
	} else if (o->mixed) {
		utf8_mixed(p, o->size);
	} else {
		for (i = 0; i < o->size; i++)
			p[i] = (unsigned char)ascii[i % (sizeof(ascii) - 1)];
	}
	return p;
}
