/* The numbers Rust cannot do as the server does.
 *
 * Long double arithmetic for INCREX BYFLOAT, as the server does it: 80-bit x87 extended
 * precision on x86-64. Rust has no long double and cannot pass one across the C ABI, so the
 * values live in 16-byte slots that Rust treats as opaque, and every operation on them is a call
 * here. Parsing, formatting and replying go through the server's own module API functions,
 * so the text is exactly the server's.
 *
 * And a double parsed as Redis parses one (its string2d): C's strtod, which also reads
 * hexadecimal floats, where some hosts' own parsers (Valkey's) do not. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleCtx RedisModuleCtx;

_Static_assert(sizeof(long double) <= 16, "a long double fits its 16-byte slot");
_Static_assert(_Alignof(long double) <= 16, "and its alignment");

static int (*string_to_ld)(const RedisModuleString *str, long double *out);
static RedisModuleString *(*string_from_ld)(RedisModuleCtx *ctx, long double value, int human);
static int (*reply_with_ld)(RedisModuleCtx *ctx, long double value);

/* Finds the three module API functions; 1 if the server has them all. */
int goblin_ld_init(int (*get_api)(const char *name, void *out)) {
    return get_api("RedisModule_StringToLongDouble", (void *)&string_to_ld) == 0 &&
           get_api("RedisModule_CreateStringFromLongDouble", (void *)&string_from_ld) == 0 &&
           get_api("RedisModule_ReplyWithLongDouble", (void *)&reply_with_ld) == 0;
}

/* The server's string2ld: 1 and the value, or 0 if the string is not a valid float. */
int goblin_ld_parse(const RedisModuleString *text, long double *out) {
    return string_to_ld(text, out) == 0;
}

/* The value as INCRBYFLOAT stores it (%.17Lf, trailing zeros trimmed, -0 as 0). */
RedisModuleString *goblin_ld_format(RedisModuleCtx *ctx, const long double *value) {
    return string_from_ld(ctx, *value, 1);
}

/* A bulk string in RESP2, a double in RESP3, in the same human form. */
int goblin_ld_reply(RedisModuleCtx *ctx, const long double *value) {
    return reply_with_ld(ctx, *value);
}

void goblin_ld_from_i64(long long value, long double *out) { *out = (long double)value; }
void goblin_ld_max(long double *out) { *out = LDBL_MAX; }
void goblin_ld_neg(const long double *value, long double *out) { *out = -*value; }
void goblin_ld_add(const long double *a, const long double *b, long double *out) { *out = *a + *b; }
void goblin_ld_sub(const long double *a, const long double *b, long double *out) { *out = *a - *b; }
int goblin_ld_cmp(const long double *a, const long double *b) { return (*a > *b) - (*a < *b); }
int goblin_ld_is_inf(const long double *value) { return isinf(*value) != 0; }

/* A double as Redis reads one: not empty, no leading space, the whole text consumed by strtod,
 * not NaN, and neither an overflow nor an underflow to zero (a subnormal is fine). `text` ends
 * in a NUL (the server's strings do), so an embedded NUL stops strtod short: refused. */
int goblin_parse_double(const char *text, size_t len, double *out) {
    if (len == 0 || isspace((unsigned char)text[0])) return 0;
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if ((size_t)(end - text) != len) return 0;
    if (errno == ERANGE && (value == HUGE_VAL || value == -HUGE_VAL || value == 0.0)) return 0;
    if (isnan(value)) return 0;
    *out = value;
    return 1;
}
