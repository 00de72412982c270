/*
 * workout_client: the wearable's side of the workoutd wire protocol (docs/protocol.md, docs/wearables.md).
 *
 * C99, no dynamic allocation, no stdio; it uses only <stdint.h>, <stddef.h> and <string.h>, so it fits
 * a microcontroller. Three parts, each usable alone:
 *   - builders write one command line (JSON plus '\n') into the caller's buffer;
 *   - a parser takes reply bytes as they arrive and yields one parsed reply per line;
 *   - a retry machine decides when to send, resend (the same bytes, the same id) and give up.
 */
#ifndef WORKOUT_CLIENT_H
#define WORKOUT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Commands ---------------------------------------------------------------------------------- */

/** Sharing services the hub knows. */
typedef enum { WC_SERVICE_FACEBOOK, WC_SERVICE_INSTAGRAM, WC_SERVICE_TWITTER } wc_service;

/**
 * Writes a start_workout line with integer id `id` into `buf`.
 * `location` is `location_len` bytes of UTF-8, `date` a NUL-terminated `yyyy-MM-dd HH:mm:ss Z` or ISO 8601
 * string. Returns the line's length (ending in '\n', not NUL-terminated) or 0 if it does not fit in `cap`.
 */
size_t wc_build_start_workout(char *buf, size_t cap, int64_t id, const char *location, size_t location_len,
                              const char *date, int intensity_level);

/** Writes an end_workout line with integer id `id`; returns its length or 0 if it does not fit. */
size_t wc_build_end_workout(char *buf, size_t cap, int64_t id);

/** Writes a share_workout line with integer id `id`; returns its length or 0 if it does not fit. */
size_t wc_build_share_workout(char *buf, size_t cap, int64_t id, wc_service service);

/**
 * Writes `len` bytes of `text` as a JSON string (quotes included) at `buf[*pos]`, advancing `*pos`.
 * Returns 0 and leaves `*pos` unchanged if it does not fit.
 */
int wc_write_json_string(char *buf, size_t cap, size_t *pos, const char *text, size_t len);

/* ---- Replies ----------------------------------------------------------------------------------- */

/** Longest reply line the parser keeps; longer lines are reported with `too_long` set. */
#define WC_LINE_MAX 512
/** Longest error code or command type kept (longer ones are cut). */
#define WC_TEXT_MAX 32

/** What the parser read from one reply line. Absent fields have their `has_` flag at 0. */
typedef struct {
    uint8_t valid;       /* 1: the line was a JSON object with a "status" string */
    uint8_t too_long;    /* 1: the line was longer than WC_LINE_MAX and was not parsed */
    uint8_t ok;          /* 1: "status":"ok" */
    uint8_t has_id;      /* 1: an integer "id" is in `id` */
    uint8_t id_is_other; /* 1: an "id" was present but is not an integer (a string id) */
    uint8_t replayed;    /* 1: "replayed":true, the hub answered a retry from memory */
    uint8_t has_workout_id;
    uint8_t has_share_id;
    uint8_t has_retry_after_ms;
    int64_t id;
    int64_t workout_id;
    int64_t share_id;
    uint32_t retry_after_ms;
    char command_type[WC_TEXT_MAX]; /* NUL-terminated, "" when absent */
    char error_code[WC_TEXT_MAX];   /* NUL-terminated, "" when absent or ok */
} wc_reply;

/** Incremental reply-line parser: feed bytes as they arrive. */
typedef struct {
    char line[WC_LINE_MAX];
    size_t len;
    size_t last_len; /* the completed line is line[0 .. last_len) until the next byte is fed */
    uint8_t overflow;
    uint8_t after_cr;
} wc_parser;

/** Prepares a parser (also drops a partly received line). */
void wc_parser_init(wc_parser *p);

/**
 * Feeds up to `len` bytes; stops after the first complete line. Returns the number of bytes used and sets
 * `*got` to 1 when `out` holds the reply of a completed line, else 0. Call again with the rest.
 * LF, CRLF and a lone CR end a line; blank lines are skipped.
 */
size_t wc_parser_feed(wc_parser *p, const uint8_t *data, size_t len, wc_reply *out, int *got);

/** Parses one complete reply line (without its line ending) of `len` bytes; never reads past `len`. */
void wc_parse_reply(const char *line, size_t len, wc_reply *out);

/** Returns 1 if `reply` has error code `code` (NUL-terminated). */
int wc_reply_is_error(const wc_reply *reply, const char *code);

/* ---- Retries ----------------------------------------------------------------------------------- */

/** What the caller must do next. */
typedef enum {
    WC_ACT_NONE,    /* wait: call wc_retry_poll again later, feed replies as they come */
    WC_ACT_SEND,    /* write the command's bytes (the same bytes every time) */
    WC_ACT_DONE,    /* answered: the reply is the one given to wc_retry_on_reply */
    WC_ACT_GIVE_UP  /* no usable answer after max_tries sends */
} wc_action;

/** One command in flight: send, wait, resend on timeout or when the hub says to, give up after N sends. */
typedef struct {
    uint32_t timeout_ms;     /* how long to wait for a reply to one send */
    uint32_t backoff_ms;     /* wait before resending after storage_unavailable */
    uint8_t max_tries;       /* sends in all, the first included */
    uint8_t tries;           /* sends so far */
    uint8_t waiting;         /* 1: a send is out, `deadline` is its timeout; 0: next send at `deadline` */
    uint8_t finished;        /* 1: done or given up */
    int64_t id;              /* the command's id: every send carries it */
    uint32_t deadline;       /* milliseconds on the caller's clock */
} wc_retry;

/** Prepares a command with id `id`; the first wc_retry_poll returns WC_ACT_SEND. */
void wc_retry_init(wc_retry *r, int64_t id, uint32_t timeout_ms, uint8_t max_tries, uint32_t now_ms);

/** Tells the machine the command's bytes were just written at `now_ms`. */
void wc_retry_sent(wc_retry *r, uint32_t now_ms);

/** Returns what to do at `now_ms`: send (first time or after a timeout or wait), give up or nothing. */
wc_action wc_retry_poll(wc_retry *r, uint32_t now_ms);

/**
 * Offers a parsed reply. A reply carrying another id is ignored (WC_ACT_NONE). `rate_limited` schedules
 * the resend after `retry_after_ms`, `storage_unavailable` after `backoff_ms`; any other reply is final
 * (WC_ACT_DONE, ok or not).
 */
wc_action wc_retry_on_reply(wc_retry *r, const wc_reply *reply, uint32_t now_ms);

#ifdef __cplusplus
}
#endif

#endif
