/*
 * Prints the lines the builders make for awkward input, for Tests/clients/builders.py to read back as JSON.
 * Also checks that every buffer one byte too small is refused; exits 1 if not.
 */
#include "workout_client.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char location[] = "Quote \" back\\slash tab\t nl\n cr\r \x01\x1f\x7f Caf\xc3\xa9 \xe2\x98\x95";

static size_t build_start(char *buf, size_t cap)
{
    return wc_build_start_workout(buf, cap, 42, location, sizeof location - 1, "2020-03-16 19:45:13 +0000", 10);
}

static int refuses_short_buffers(size_t len)
{
    char small[512];
    size_t cap;
    for (cap = 0; cap < len; cap++) {
        if (build_start(small, cap) != 0) {
            fprintf(stderr, "print_lines: a %zu-byte buffer was accepted for a %zu-byte line\n", cap, len);
            return 0;
        }
    }
    return 1;
}

int main(void)
{
    char line[512];
    size_t len = build_start(line, sizeof line);
    if (len == 0 || !refuses_short_buffers(len)) {
        return 1;
    }
    fwrite(line, 1, len, stdout);
    len = wc_build_end_workout(line, sizeof line, INT64_MIN);
    fwrite(line, 1, len, stdout);
    len = wc_build_end_workout(line, sizeof line, INT64_MAX);
    fwrite(line, 1, len, stdout);
    len = wc_build_share_workout(line, sizeof line, 0, WC_SERVICE_FACEBOOK);
    fwrite(line, 1, len, stdout);
    len = wc_build_share_workout(line, sizeof line, -1, WC_SERVICE_INSTAGRAM);
    fwrite(line, 1, len, stdout);
    len = wc_build_share_workout(line, sizeof line, 7, WC_SERVICE_TWITTER);
    fwrite(line, 1, len, stdout);
    return 0;
}
