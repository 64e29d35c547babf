/* Close frames: the body check (see wsclose.h). */
#include "wsclose.h"
#include "utf8_core.h"

int wsc_body_problem(const uint8_t *p, size_t len, const char **why)
{
    if (len == 1) {
        *why = "bad close frame";
        return 1002;
    }
    if (len >= 2 && !wsc_code_ok((p[0] << 8) | p[1])) {
        *why = "bad close code";
        return 1002;
    }
    if (len > 2 && !utf8_valid(p + 2, len - 2)) {
        *why = "invalid UTF-8 in close reason";
        return 1007;
    }
    return 0;
}
