/* UTF-8: a text's validation as it arrives (the wire protocol room's
 * utf8_stream) with its length in UTF-16 code units, and the mixed-width
 * payload for --text mixed. */
#ifndef LG_UTF8_H
#define LG_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* all zero at the start of a text */
struct utf8v {
	uint32_t st;		/* utf8_stream's state */
	uint64_t units;		/* UTF-16 code units so far */
	int bad;		/* not UTF-8: set at the chunk that makes it so, and kept */
};

/* Validate the next chunk (any split); sets v->bad on the first error. */
void utf8v_feed(struct utf8v *v, const unsigned char *p, size_t n);

/* 1 if everything fed so far is complete, valid UTF-8. */
int utf8v_ok(const struct utf8v *v);

/* Exactly n bytes of valid UTF-8 mixing 1-, 2-, 3- and 4-byte characters. */
void utf8_mixed(unsigned char *out, size_t n);

#endif
