/* UTF-8: a streaming validator that also counts UTF-16 code units, and the
 * mixed-width payload for --text mixed. */
#ifndef LG_UTF8_H
#define LG_UTF8_H

#include <stddef.h>
#include <stdint.h>

struct utf8v {
	unsigned need;		/* continuation bytes still expected */
	unsigned seqlen;	/* length of the sequence in progress */
	uint32_t cp;
	uint64_t units;		/* UTF-16 code units so far */
	int bad;
};

/* Validate the next chunk (any split); sets v->bad on the first error. */
void utf8v_feed(struct utf8v *v, const unsigned char *p, size_t n);

/* 1 if everything fed so far is complete, valid UTF-8. */
int utf8v_ok(const struct utf8v *v);

/*
 * Decode valid UTF-8 (checked with utf8v first) into UTF-16 code units; `out`
 * has room for utf8v's `units`. Returns the number of units written.
 */
size_t utf8_to_utf16(const unsigned char *p, size_t n, uint16_t *out);

/* Exactly n bytes of valid UTF-8 mixing 1-, 2-, 3- and 4-byte characters. */
void utf8_mixed(unsigned char *out, size_t n);

#endif
