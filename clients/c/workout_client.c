/*
 * workout_client: see workout_client.h. Only <stdint.h>, <stddef.h> and <string.h> from libc.
 */
#include "workout_client.h"

#include <string.h>

/* ---- Commands ---------------------------------------------------------------------------------- */

static int put_bytes(char *buf, size_t cap, size_t *pos, const char *s, size_t n)
{
    if (n > cap || *pos > cap - n) {
        return 0;
    }
    memcpy(buf + *pos, s, n);
    *pos += n;
    return 1;
}

static int put_text(char *buf, size_t cap, size_t *pos, const char *s)
{
    return put_bytes(buf, cap, pos, s, strlen(s));
}

static int put_i64(char *buf, size_t cap, size_t *pos, int64_t value)
{
    char digits[21];
    size_t n = 0;
    uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    char out[21];
    size_t k = 0;
    do {
        digits[n++] = (char)('0' + (int)(magnitude % 10u));
        magnitude /= 10u;
    } while (magnitude != 0u);
    if (value < 0) {
        out[k++] = '-';
    }
    while (n > 0) {
        out[k++] = digits[--n];
    }
    return put_bytes(buf, cap, pos, out, k);
}

int wc_write_json_string(char *buf, size_t cap, size_t *pos, const char *text, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t start = *pos;
    size_t i;
    if (!put_bytes(buf, cap, pos, "\"", 1)) {
        return 0;
    }
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        char esc[6];
        size_t n = 0;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            n = 2;
        } else if (c == '\n') {
            memcpy(esc, "\\n", 2);
            n = 2;
        } else if (c == '\r') {
            memcpy(esc, "\\r", 2);
            n = 2;
        } else if (c == '\t') {
            memcpy(esc, "\\t", 2);
            n = 2;
        } else if (c < 0x20u || c == 0x7fu) {
            esc[0] = '\\';
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 0x0fu];
            n = 6;
        } else {
            esc[0] = (char)c;
            n = 1;
        }
        if (!put_bytes(buf, cap, pos, esc, n)) {
            *pos = start;
            return 0;
        }
    }
    if (!put_bytes(buf, cap, pos, "\"", 1)) {
        *pos = start;
        return 0;
    }
    return 1;
}

static size_t finish_line(char *buf, size_t cap, size_t *pos, int ok)
{
    if (!ok || !put_bytes(buf, cap, pos, "}\n", 2)) {
        return 0;
    }
    return *pos;
}

static int put_head(char *buf, size_t cap, size_t *pos, const char *command_type, int64_t id)
{
    return put_text(buf, cap, pos, "{\"command_type\":\"") && put_text(buf, cap, pos, command_type) &&
           put_text(buf, cap, pos, "\",\"id\":") && put_i64(buf, cap, pos, id);
}

size_t wc_build_start_workout(char *buf, size_t cap, int64_t id, const char *location, size_t location_len,
                              const char *date, int intensity_level)
{
    size_t pos = 0;
    int ok = put_head(buf, cap, &pos, "start_workout", id) && put_text(buf, cap, &pos, ",\"location\":") &&
             wc_write_json_string(buf, cap, &pos, location, location_len) &&
             put_text(buf, cap, &pos, ",\"date\":") && wc_write_json_string(buf, cap, &pos, date, strlen(date)) &&
             put_text(buf, cap, &pos, ",\"intensityLevel\":") && put_i64(buf, cap, &pos, intensity_level);
    return finish_line(buf, cap, &pos, ok);
}

size_t wc_build_end_workout(char *buf, size_t cap, int64_t id)
{
    size_t pos = 0;
    int ok = put_head(buf, cap, &pos, "end_workout", id);
    return finish_line(buf, cap, &pos, ok);
}

size_t wc_build_share_workout(char *buf, size_t cap, int64_t id, wc_service service)
{
    static const char *const names[] = {"facebook", "instagram", "twitter"};
    size_t pos = 0;
    int ok = (unsigned)service <= (unsigned)WC_SERVICE_TWITTER && put_head(buf, cap, &pos, "share_workout", id) &&
             put_text(buf, cap, &pos, ",\"service\":\"") && put_text(buf, cap, &pos, names[service]) &&
             put_text(buf, cap, &pos, "\"");
    return finish_line(buf, cap, &pos, ok);
}

/* ---- Replies ----------------------------------------------------------------------------------- */

/* A cursor over one line: every read checks `i < n` first. */
typedef struct {
    const char *s;
    size_t n;
    size_t i;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r')) {
        c->i++;
    }
}

static int take(cursor *c, char ch)
{
    skip_ws(c);
    if (c->i < c->n && c->s[c->i] == ch) {
        c->i++;
        return 1;
    }
    return 0;
}

/*
 * Reads a JSON string at the cursor into `dst` (cut to `cap - 1` bytes, NUL-terminated; escapes
 * outside ASCII become '?'). `dst` may be NULL to skip it. Returns 0 if there is no complete string.
 */
static int read_string(cursor *c, char *dst, size_t cap)
{
    size_t k = 0;
    skip_ws(c);
    if (c->i >= c->n || c->s[c->i] != '"') {
        return 0;
    }
    c->i++;
    while (c->i < c->n) {
        char ch = c->s[c->i++];
        if (ch == '"') {
            if (dst != NULL && cap > 0) {
                dst[k] = '\0';
            }
            return 1;
        }
        if (ch == '\\') {
            if (c->i >= c->n) {
                return 0;
            }
            ch = c->s[c->i++];
            switch (ch) {
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u': {
                unsigned value = 0;
                int d;
                if (c->n - c->i < 4) {
                    return 0;
                }
                for (d = 0; d < 4; d++) {
                    char h = c->s[c->i++];
                    value <<= 4;
                    if (h >= '0' && h <= '9') {
                        value |= (unsigned)(h - '0');
                    } else if (h >= 'a' && h <= 'f') {
                        value |= (unsigned)(h - 'a' + 10);
                    } else if (h >= 'A' && h <= 'F') {
                        value |= (unsigned)(h - 'A' + 10);
                    } else {
                        return 0;
                    }
                }
                ch = value < 0x80u ? (char)value : '?';
                break;
            }
            default: break; /* '"', '\\', '/' stand for themselves */
            }
        }
        if (dst != NULL && cap > 0 && k < cap - 1) {
            dst[k++] = ch;
        }
    }
    return 0;
}

/* Reads an integer; sets `*is_int` to 0 for a fraction, exponent or overflow (the number is still skipped). */
static int read_number(cursor *c, int64_t *out, int *is_int)
{
    uint64_t magnitude = 0;
    int negative = 0;
    int digits = 0;
    *is_int = 1;
    skip_ws(c);
    if (c->i < c->n && c->s[c->i] == '-') {
        negative = 1;
        c->i++;
    }
    while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
        unsigned d = (unsigned)(c->s[c->i] - '0');
        if (magnitude > (UINT64_C(9223372036854775808) - d) / 10u) {
            *is_int = 0;
        } else {
            magnitude = magnitude * 10u + d;
        }
        digits++;
        c->i++;
    }
    if (digits == 0) {
        return 0;
    }
    while (c->i < c->n && (c->s[c->i] == '.' || c->s[c->i] == 'e' || c->s[c->i] == 'E' || c->s[c->i] == '+' ||
                           c->s[c->i] == '-' || (c->s[c->i] >= '0' && c->s[c->i] <= '9'))) {
        *is_int = 0;
        c->i++;
    }
    if (*is_int) {
        if (!negative && magnitude > (uint64_t)INT64_MAX) {
            *is_int = 0;
        } else if (negative) {
            *out = magnitude == UINT64_C(9223372036854775808) ? INT64_MIN : -(int64_t)magnitude;
        } else {
            *out = (int64_t)magnitude;
        }
    }
    return 1;
}

/* Skips one value of any kind without recursion. Returns 0 if the line ends first. */
static int skip_value(cursor *c)
{
    unsigned depth = 0;
    skip_ws(c);
    if (c->i >= c->n) {
        return 0;
    }
    do {
        char ch;
        skip_ws(c);
        if (c->i >= c->n) {
            return 0;
        }
        ch = c->s[c->i];
        if (ch == '"') {
            if (!read_string(c, NULL, 0)) {
                return 0;
            }
        } else if (ch == '{' || ch == '[') {
            depth++;
            c->i++;
        } else if (ch == '}' || ch == ']') {
            if (depth == 0) {
                return 0;
            }
            depth--;
            c->i++;
        } else if (ch == ',' || ch == ':') {
            if (depth == 0) {
                return 0;
            }
            c->i++;
        } else {
            size_t start = c->i;
            while (c->i < c->n && c->s[c->i] != ',' && c->s[c->i] != '}' && c->s[c->i] != ']' &&
                   c->s[c->i] != ' ' && c->s[c->i] != '"' && c->s[c->i] != '{' && c->s[c->i] != '[' &&
                   c->s[c->i] != ':') {
                c->i++;
            }
            if (c->i == start) {
                return 0;
            }
        }
    } while (depth > 0);
    return 1;
}

static int read_integer_field(cursor *c, int64_t *out, uint8_t *has)
{
    int is_int;
    int64_t value = 0;
    skip_ws(c);
    if (c->i < c->n && (c->s[c->i] == '-' || (c->s[c->i] >= '0' && c->s[c->i] <= '9'))) {
        if (!read_number(c, &value, &is_int)) {
            return 0;
        }
        if (is_int) {
            *out = value;
            *has = 1;
        }
        return 1;
    }
    return skip_value(c);
}

static int parse_error_object(cursor *c, wc_reply *out)
{
    char key[WC_TEXT_MAX];
    if (!take(c, '{')) {
        return skip_value(c);
    }
    if (take(c, '}')) {
        return 1;
    }
    for (;;) {
        int ok;
        if (!read_string(c, key, sizeof key) || !take(c, ':')) {
            return 0;
        }
        if (strcmp(key, "code") == 0) {
            skip_ws(c);
            ok = (c->i < c->n && c->s[c->i] == '"') ? read_string(c, out->error_code, sizeof out->error_code)
                                                     : skip_value(c);
        } else if (strcmp(key, "retry_after_ms") == 0) {
            int64_t value = 0;
            uint8_t has = 0;
            ok = read_integer_field(c, &value, &has);
            if (has && value >= 0) {
                out->retry_after_ms = value > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)value;
                out->has_retry_after_ms = 1;
            }
        } else {
            ok = skip_value(c);
        }
        if (!ok) {
            return 0;
        }
        if (take(c, '}')) {
            return 1;
        }
        if (!take(c, ',')) {
            return 0;
        }
    }
}

void wc_parse_reply(const char *line, size_t len, wc_reply *out)
{
    cursor c;
    char key[WC_TEXT_MAX];
    char status[8];
    int has_status = 0;
    memset(out, 0, sizeof *out);
    c.s = line;
    c.n = len;
    c.i = 0;
    if (!take(&c, '{')) {
        return;
    }
    if (!take(&c, '}')) {
        for (;;) {
            int ok;
            if (!read_string(&c, key, sizeof key) || !take(&c, ':')) {
                return;
            }
            skip_ws(&c);
            if (strcmp(key, "status") == 0 && c.i < c.n && c.s[c.i] == '"') {
                ok = read_string(&c, status, sizeof status);
                has_status = ok;
            } else if (strcmp(key, "command_type") == 0 && c.i < c.n && c.s[c.i] == '"') {
                ok = read_string(&c, out->command_type, sizeof out->command_type);
            } else if (strcmp(key, "id") == 0) {
                if (c.i < c.n && c.s[c.i] == '"') {
                    ok = read_string(&c, NULL, 0);
                    out->id_is_other = 1;
                } else {
                    ok = read_integer_field(&c, &out->id, &out->has_id);
                    if (!out->has_id) {
                        out->id_is_other = 1;
                    }
                }
            } else if (strcmp(key, "workout_id") == 0) {
                ok = read_integer_field(&c, &out->workout_id, &out->has_workout_id);
            } else if (strcmp(key, "share_id") == 0) {
                ok = read_integer_field(&c, &out->share_id, &out->has_share_id);
            } else if (strcmp(key, "replayed") == 0) {
                out->replayed = (uint8_t)(c.n - c.i >= 4 && memcmp(c.s + c.i, "true", 4) == 0);
                ok = skip_value(&c);
            } else if (strcmp(key, "error") == 0) {
                ok = parse_error_object(&c, out);
            } else {
                ok = skip_value(&c);
            }
            if (!ok) {
                return;
            }
            if (take(&c, '}')) {
                break;
            }
            if (!take(&c, ',')) {
                return;
            }
        }
    }
    skip_ws(&c);
    if (c.i != c.n || !has_status) {
        return;
    }
    out->ok = (uint8_t)(strcmp(status, "ok") == 0);
    if (out->ok) {
        out->error_code[0] = '\0';
    }
    out->valid = 1;
}

void wc_parser_init(wc_parser *p)
{
    p->len = 0;
    p->last_len = 0;
    p->overflow = 0;
    p->after_cr = 0;
}

size_t wc_parser_feed(wc_parser *p, const uint8_t *data, size_t len, wc_reply *out, int *got)
{
    size_t i;
    *got = 0;
    for (i = 0; i < len; i++) {
        uint8_t b = data[i];
        if (p->after_cr && b == '\n') {
            p->after_cr = 0;
            continue;
        }
        p->after_cr = 0;
        if (b == '\n' || b == '\r') {
            p->after_cr = (uint8_t)(b == '\r');
            if (p->len == 0 && !p->overflow) {
                continue;
            }
            if (p->overflow) {
                memset(out, 0, sizeof *out);
                out->too_long = 1;
            } else {
                wc_parse_reply(p->line, p->len, out);
            }
            p->last_len = p->len;
            p->len = 0;
            p->overflow = 0;
            *got = 1;
            return i + 1;
        }
        if (p->len < WC_LINE_MAX) {
            p->line[p->len++] = (char)b;
        } else {
            p->overflow = 1;
        }
    }
    return len;
}

int wc_reply_is_error(const wc_reply *reply, const char *code)
{
    return reply->valid && !reply->ok && strcmp(reply->error_code, code) == 0;
}

/* ---- Retries ----------------------------------------------------------------------------------- */

static int reached(uint32_t now_ms, uint32_t deadline)
{
    return (int32_t)(now_ms - deadline) >= 0;
}

void wc_retry_init(wc_retry *r, int64_t id, uint32_t timeout_ms, uint8_t max_tries, uint32_t now_ms)
{
    r->timeout_ms = timeout_ms;
    r->backoff_ms = timeout_ms;
    r->max_tries = max_tries == 0 ? 1 : max_tries;
    r->tries = 0;
    r->waiting = 0;
    r->finished = 0;
    r->id = id;
    r->deadline = now_ms;
}

void wc_retry_sent(wc_retry *r, uint32_t now_ms)
{
    if (r->tries < 255u) {
        r->tries++;
    }
    r->waiting = 1;
    r->deadline = now_ms + r->timeout_ms;
}

wc_action wc_retry_poll(wc_retry *r, uint32_t now_ms)
{
    if (r->finished || !reached(now_ms, r->deadline)) {
        return WC_ACT_NONE;
    }
    r->waiting = 0;
    if (r->tries >= r->max_tries) {
        r->finished = 1;
        return WC_ACT_GIVE_UP;
    }
    return WC_ACT_SEND;
}

wc_action wc_retry_on_reply(wc_retry *r, const wc_reply *reply, uint32_t now_ms)
{
    uint32_t wait;
    if (r->finished || r->tries == 0 || !reply->valid) {
        return WC_ACT_NONE;
    }
    if (reply->has_id ? reply->id != r->id : (reply->ok || reply->id_is_other)) {
        return WC_ACT_NONE;
    }
    if (wc_reply_is_error(reply, "rate_limited")) {
        wait = reply->has_retry_after_ms ? reply->retry_after_ms : r->timeout_ms;
    } else if (wc_reply_is_error(reply, "storage_unavailable")) {
        wait = r->backoff_ms;
    } else {
        r->finished = 1;
        return WC_ACT_DONE;
    }
    if (r->tries >= r->max_tries) {
        r->finished = 1;
        return WC_ACT_GIVE_UP;
    }
    r->waiting = 0;
    r->deadline = now_ms + wait;
    return WC_ACT_NONE;
}
