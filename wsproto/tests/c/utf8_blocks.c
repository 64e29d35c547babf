/*
 * utf8_valid() 16 bytes at a time (SSSE3) against the one-character-at-a-time
 * validator of the same file, on every sequence of 1 to 4 bytes drawn from the
 * bytes where UTF-8's rules change, placed at every offset around a block
 * boundary and after 64 bytes of ASCII (taken 64 at a time), ending the text
 * or followed by ASCII; then on pseudo-random texts
 * of valid characters with one byte changed or cut short.  Prints the count of
 * texts checked, the mismatches (each, up to 10) and whether the SIMD path ran.
 */
#include "utf8_core.c"

#include <stdio.h>

static const uint8_t EDGES[] = {
    0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0,
    0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xfe, 0xff,
};
#define NEDGES (sizeof EDGES)

static long checked, mismatches;

static void compare(const uint8_t *p, size_t n)
{
    int fast = utf8_valid(p, n), slow = utf8_valid_scalar(p, n);
    size_t i;
    checked++;
    if (fast == slow || ++mismatches > 10)
        return;
    printf("mismatch: utf8_valid %d, scalar %d, %zu bytes:", fast, slow, n);
    for (i = 0; i < n; i++)
        printf(" %02x", p[i]);
    printf("\n");
}

static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

int main(void)
{
    static const size_t offsets[] = { 0, 1, 12, 13, 14, 15, 16, 17, 30, 31, 62, 63, 64, 65, 78, 79, 80 };
    static const char *const chars[] = {
        "a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf",
        "\xee\x80\x80", "\xf4\x8f\xbf\xbf", "\xe0\xa0\x80", "\xf0\x90\x80\x80",
    };
    uint8_t buf[128], text[512];
    size_t n, o, code, total, k, len;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    long r;

    for (n = 1, total = NEDGES; n <= 4; n++, total *= NEDGES) {
        for (code = 0; code < total; code++) {
            uint8_t s[4];
            size_t c = code;
            for (k = 0; k < n; k++, c /= NEDGES)
                s[k] = EDGES[c % NEDGES];
            for (o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
                memset(buf, 'a', sizeof buf);
                memcpy(buf + offsets[o], s, n);
                len = offsets[o] + n;
                compare(buf, len < U8_SIMD_MIN ? U8_SIMD_MIN : len); /* ends the text (or ASCII up to the minimum) */
                compare(buf, len <= 48 ? 48 : 100);                 /* ASCII after it */
            }
        }
    }
    for (r = 0; r < 200000; r++) {
        size_t want = U8_SIMD_MIN + next(&x) % 400;
        len = 0;
        while (len + 4 < want) {
            const char *ch = chars[next(&x) % (sizeof chars / sizeof chars[0])];
            memcpy(text + len, ch, strlen(ch));
            len += strlen(ch);
        }
        next(&x);
        if (x % 3 == 0)
            text[x % len] = (uint8_t)(x >> 20);
        if (x % 5 == 0)
            len -= (x >> 30) % 3;
        compare(text, len);
    }
#ifdef U8_SIMD
    printf("checked %ld, mismatches %ld, simd %d\n", checked, mismatches, u8_have_ssse3());
#else
    printf("checked %ld, mismatches %ld, simd 0\n", checked, mismatches);
#endif
    return mismatches != 0;
}
