#include "utf8.h"
#include "utf8_core.h"

#include <string.h>

void utf8v_feed(struct utf8v *v, const unsigned char *p, size_t n)
{
	if (v->bad)
		return;
	if (!utf8_stream(&v->st, p, n)) {
		v->bad = 1;
		return;
	}
	v->units += utf16_units(p, n);
}

int utf8v_ok(const struct utf8v *v)
{
	return !v->bad && utf8_stream_complete(v->st);
}

void utf8_mixed(unsigned char *out, size_t n)
{
	/* a, é, €, 😀, b, ß, 中, 🎉 ... */
	static const char *const chars[] = {
		"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		"b", "\xc3\x9f", "\xe4\xb8\xad", "\xf0\x9f\x8e\x89",
	};
	size_t pos = 0, k = 0;

	while (pos < n) {
		const char *c = chars[k++ % 8];
		size_t l = strlen(c);

		if (pos + l > n) {	/* pad the tail with ASCII */
			out[pos++] = 'z';
			continue;
		}
		memcpy(out + pos, c, l);
		pos += l;
	}
}
