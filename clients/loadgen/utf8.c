#include "utf8.h"

#include <string.h>

void utf8v_feed(struct utf8v *v, const unsigned char *p, size_t n)
{
	size_t i = 0;

	if (v->bad)
		return;
	while (i < n) {
		unsigned char c;

		if (!v->need) {
			/* ASCII fast path, 8 bytes at a time */
			while (i + 8 <= n) {
				uint64_t w;

				memcpy(&w, p + i, 8);
				if (w & 0x8080808080808080ull)
					break;
				i += 8;
				v->units += 8;
			}
			if (i == n)
				break;
			c = p[i++];
			if (c < 0x80) {
				v->units++;
			} else if (c >= 0xc2 && c <= 0xdf) {
				v->need = 1, v->seqlen = 2, v->cp = c & 0x1f;
			} else if (c >= 0xe0 && c <= 0xef) {
				v->need = 2, v->seqlen = 3, v->cp = c & 0x0f;
			} else if (c >= 0xf0 && c <= 0xf4) {
				v->need = 3, v->seqlen = 4, v->cp = c & 0x07;
			} else {
				v->bad = 1;
				return;
			}
			continue;
		}
		c = p[i++];
		if ((c & 0xc0) != 0x80) {
			v->bad = 1;
			return;
		}
		v->cp = v->cp << 6 | (c & 0x3f);
		if (--v->need)
			continue;
		/* sequence complete: reject overlong forms, surrogates, > U+10FFFF */
		if ((v->seqlen == 3 &&
		     (v->cp < 0x800 || (v->cp >= 0xd800 && v->cp <= 0xdfff))) ||
		    (v->seqlen == 4 && (v->cp < 0x10000 || v->cp > 0x10ffff))) {
			v->bad = 1;
			return;
		}
		v->units += v->seqlen == 4 ? 2 : 1;
	}
}

int utf8v_ok(const struct utf8v *v)
{
	return !v->bad && !v->need;
}

size_t utf8_to_utf16(const unsigned char *p, size_t n, uint16_t *out)
{
	size_t i = 0, k = 0;

	while (i < n) {
		unsigned char c = p[i];
		uint32_t cp;
		unsigned len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4, j;

		if (i + len > n)
			break;
		cp = len == 1 ? c : c & (0x7f >> len);
		for (j = 1; j < len; j++)
			cp = cp << 6 | (p[i + j] & 0x3f);
		i += len;
		if (cp >= 0x10000) {
			cp -= 0x10000;
			out[k++] = (uint16_t)(0xd800 | cp >> 10);
			out[k++] = (uint16_t)(0xdc00 | (cp & 0x3ff));
		} else {
			out[k++] = (uint16_t)cp;
		}
	}
	return k;
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
