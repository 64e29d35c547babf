/*
 * The corpus (--text json, --bytes random; clients/README.md, "Message contents"):
 * message bodies that compress as real traffic does, each ring slot's from its own
 * seed. The same bytes as the JavaScript workload's (clients/workload/payload.js,
 * jsonString and randomBytes); clients/tests/test_corpus.py compares the two.
 */
#ifndef LG_CORPUS_H
#define LG_CORPUS_H

#include <stddef.h>

/* Exactly n ASCII bytes of slot `slot`'s trade feed (newline-delimited JSON records). */
void corpus_json(unsigned slot, unsigned char *out, size_t n);

/* n random bytes of slot `slot` (xorshift32, four bytes an output, low byte first). */
void corpus_random(unsigned slot, unsigned char *out, size_t n);

#endif
