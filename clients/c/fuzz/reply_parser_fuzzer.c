/*
 * libFuzzer target for the reply parser: any bytes, whole or in pieces, under AddressSanitizer.
 *
 * wc_parse_reply gets an exact-size heap copy, so reading one byte past the line is a finding. The same
 * bytes then go through wc_parser_feed in chunks whose sizes come from the input, and every reply goes
 * through the retry machine. Broken invariants abort.
 */
#include "workout_client.h"

#include <stdlib.h>
#include <string.h>

static void check(const wc_reply *reply)
{
    if (memchr(reply->command_type, '\0', sizeof reply->command_type) == NULL ||
        memchr(reply->error_code, '\0', sizeof reply->error_code) == NULL) {
        abort();
    }
    if (reply->ok && (!reply->valid || reply->error_code[0] != '\0')) {
        abort();
    }
    if (reply->too_long && reply->valid) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wc_reply reply;
    wc_parser parser;
    wc_retry retry;
    size_t used = 0;
    size_t step = 1;
    uint32_t now = 0;
    char *copy = malloc(size == 0 ? 1 : size);
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data, size);
    wc_parse_reply(copy, size, &reply);
    check(&reply);
    free(copy);

    wc_parser_init(&parser);
    wc_retry_init(&retry, 7, 1000, 5, now);
    if (wc_retry_poll(&retry, now) == WC_ACT_SEND) {
        wc_retry_sent(&retry, now);
    }
    while (used < size) {
        int got = 0;
        size_t chunk = size - used < step ? size - used : step;
        size_t n = wc_parser_feed(&parser, data + used, chunk, &reply, &got);
        if (n == 0 || n > chunk || parser.len > WC_LINE_MAX || parser.last_len > WC_LINE_MAX) {
            abort();
        }
        used += n;
        step = (size_t)(data[used - 1] % 17u) + 1u;
        if (got) {
            check(&reply);
            now += 10;
            (void)wc_retry_on_reply(&retry, &reply, now);
            if (wc_retry_poll(&retry, now) == WC_ACT_SEND) {
                wc_retry_sent(&retry, now);
            }
        }
    }
    return 0;
}
