/*
 * native-fixture: a minimal switchyard plugin written in plain C99.
 *
 * It speaks newline-delimited JSON-RPC 2.0 on stdin/stdout
 * (protocol "switchyard.plugin/v1") and answers in microseconds, so that a
 * benchmark run against it measures the host's own overhead rather than the
 * plugin's. It has no dependencies: the JSON parser below is a small strict
 * recursive-descent parser (RFC 8259) that builds a tiny tree.
 *
 * Build: cc -std=c99 -O2 -Wall -Wextra -Werror -o native-fixture native-fixture.c
 */
#define _POSIX_C_SOURCE 200809L /* read(2), gmtime_r(3) */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINE 1048576 /* protocol limit for one line, newline excluded */
#define MAX_DEPTH 64     /* nesting limit; deeper input is a parse error, not a stack overflow */
#define MAX_ECHO 256     /* longest piece of client text quoted back inside an error message */

#define PROTOCOL_VERSION "switchyard.plugin/v1"
#define SCOPE_METADATA "project.metadata.read"
#define SCOPE_FILES "project.files.read"

/* JSON-RPC / switchyard error codes. */
#define E_PARSE -32700
#define E_NO_METHOD -32601
#define E_PARAMS -32602
#define E_PROTOCOL -32001
#define E_STATE -32002
#define E_DENIED -32003

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */
/* ------------------------------------------------------------------------ */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fputs("native-fixture: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

/* Length-aware comparison: decoded JSON strings may contain NUL bytes. */
static int str_is(const char *s, size_t len, const char *lit)
{
    return len == strlen(lit) && memcmp(s, lit, len) == 0;
}

/* ------------------------------------------------------------------------ */
/* JSON tree and parser                                                     */
/* ------------------------------------------------------------------------ */

typedef enum { J_NULL, J_FALSE, J_TRUE, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } jtype;

typedef struct jnode {
    jtype type;
    const char *raw; /* the value's source text; ids are echoed from here verbatim */
    size_t raw_len;
    char *str; /* J_STRING: decoded bytes (UTF-8, may contain NUL) */
    size_t len;
    char *key; /* set when this node is a member of an object */
    size_t key_len;
    struct jnode *child; /* J_ARRAY / J_OBJECT: first element or member */
    struct jnode *next;  /* next sibling in the parent container */
} jnode;

typedef struct {
    const char *p;   /* cursor */
    const char *end; /* one past the last byte of the line */
    const char *err; /* first error, a static string */
} parser;

static void jfree(jnode *n)
{
    /* Siblings are walked iteratively; recursion only follows nesting, which
     * the parser caps at MAX_DEPTH. */
    while (n) {
        jnode *next = n->next;
        jfree(n->child);
        free(n->str);
        free(n->key);
        free(n);
        n = next;
    }
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int fail(parser *ps, const char *msg)
{
    if (!ps->err)
        ps->err = msg;
    return 0;
}

static int hex4(const unsigned char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return 0;
        v = v * 16 + d;
    }
    *out = v;
    return 1;
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0 if it is malformed. Validating here
 * means every string we echo back is valid UTF-8 too. */
static size_t utf8_seq(const unsigned char *s, const unsigned char *end)
{
    unsigned c = s[0], lo = 0x80, hi = 0xBF;
    size_t n;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        if (c == 0xED)
            hi = 0x9F; /* UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        if (c == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else
        return 0;
    if ((size_t)(end - s) < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

static size_t utf8_put(unsigned char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parses the string token at ps->p (which is at the opening quote) into a
 * freshly allocated, NUL-terminated buffer. */
static int parse_string(parser *ps, char **out, size_t *out_len)
{
    const unsigned char *s = (const unsigned char *)ps->p + 1;
    const unsigned char *end = (const unsigned char *)ps->end;
    const unsigned char *q = s;

    /* First pass: find the closing quote, so the buffer can be sized exactly.
     * Decoding never makes a string longer than its source text. */
    while (q < end && *q != '"')
        q += (*q == '\\' && q + 1 < end) ? 2 : 1;
    if (q >= end)
        return fail(ps, "unterminated string");

    unsigned char *buf = xmalloc((size_t)(q - s) + 1), *o = buf;
    while (s < q) {
        unsigned c = *s;
        if (c < 0x20) {
            free(buf);
            return fail(ps, "control character in string");
        }
        if (c < 0x80 && c != '\\') {
            *o++ = (unsigned char)c;
            s++;
            continue;
        }
        if (c >= 0x80) {
            size_t n = utf8_seq(s, q);
            if (!n) {
                free(buf);
                return fail(ps, "invalid UTF-8 in string");
            }
            memcpy(o, s, n);
            o += n;
            s += n;
            continue;
        }
        /* Escape sequence. */
        s++;
        switch (*s) {
        case '"': *o++ = '"'; s++; break;
        case '\\': *o++ = '\\'; s++; break;
        case '/': *o++ = '/'; s++; break;
        case 'b': *o++ = '\b'; s++; break;
        case 'f': *o++ = '\f'; s++; break;
        case 'n': *o++ = '\n'; s++; break;
        case 'r': *o++ = '\r'; s++; break;
        case 't': *o++ = '\t'; s++; break;
        case 'u': {
            unsigned cp, lo;
            if (q - s < 5 || !hex4(s + 1, &cp)) {
                free(buf);
                return fail(ps, "bad \\u escape");
            }
            s += 5;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                /* A high surrogate must be followed by a low one; lone
                 * surrogates cannot be represented in UTF-8, so reject them. */
                if (q - s < 6 || s[0] != '\\' || s[1] != 'u' || !hex4(s + 2, &lo) || lo < 0xDC00 ||
                    lo > 0xDFFF) {
                    free(buf);
                    return fail(ps, "unpaired surrogate in \\u escape");
                }
                s += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(buf);
                return fail(ps, "unpaired surrogate in \\u escape");
            }
            o += utf8_put(o, cp);
            break;
        }
        default:
            free(buf);
            return fail(ps, "bad escape in string");
        }
    }
    *o = '\0';
    *out = (char *)buf;
    *out_len = (size_t)(o - buf);
    ps->p = (const char *)q + 1;
    return 1;
}

static int is_digit(const parser *ps)
{
    return ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9';
}

/* Validates the number grammar; the value itself is only ever echoed raw,
 * so big integers such as 9007199254740993 survive untouched. */
static int parse_number(parser *ps)
{
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    if (ps->p < ps->end && *ps->p == '0')
        ps->p++;
    else if (is_digit(ps))
        while (is_digit(ps))
            ps->p++;
    else
        return fail(ps, "bad number");
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (!is_digit(ps))
            return fail(ps, "bad number");
        while (is_digit(ps))
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (!is_digit(ps))
            return fail(ps, "bad number");
        while (is_digit(ps))
            ps->p++;
    }
    return 1;
}

static int parse_literal(parser *ps, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, lit, n) != 0)
        return fail(ps, "invalid token");
    ps->p += n;
    return 1;
}

static jnode *parse_value(parser *ps, int depth);

/* Parses the elements of an array or the members of an object into n->child.
 * ps->p is just past the opening bracket. */
static int parse_container(parser *ps, jnode *n, int depth)
{
    int is_obj = n->type == J_OBJECT;
    char close = is_obj ? '}' : ']';
    jnode **tail = &n->child;

    if (depth > MAX_DEPTH)
        return fail(ps, "nesting too deep");
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return 1;
    }
    for (;;) {
        char *key = NULL;
        size_t key_len = 0;
        if (is_obj) {
            if (ps->p >= ps->end || *ps->p != '"')
                return fail(ps, "expected object key");
            if (!parse_string(ps, &key, &key_len))
                return 0;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                return fail(ps, "expected ':'");
            }
            ps->p++;
        }
        jnode *child = parse_value(ps, depth + 1);
        if (!child) {
            free(key);
            return 0;
        }
        child->key = key;
        child->key_len = key_len;
        *tail = child; /* linked immediately, so jfree(n) releases it on any later error */
        tail = &child->next;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return 1;
        }
        return fail(ps, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

/* Parses one value; leading whitespace is skipped. Returns NULL on error. */
static jnode *parse_value(parser *ps, int depth)
{
    skip_ws(ps);
    if (ps->p >= ps->end) {
        fail(ps, "unexpected end of input");
        return NULL;
    }
    jnode *n = xmalloc(sizeof *n);
    memset(n, 0, sizeof *n);
    n->raw = ps->p;
    int ok;
    switch (*ps->p) {
    case '{':
    case '[':
        n->type = *ps->p == '{' ? J_OBJECT : J_ARRAY;
        ps->p++;
        ok = parse_container(ps, n, depth);
        break;
    case '"':
        n->type = J_STRING;
        ok = parse_string(ps, &n->str, &n->len);
        break;
    case 't':
        n->type = J_TRUE;
        ok = parse_literal(ps, "true");
        break;
    case 'f':
        n->type = J_FALSE;
        ok = parse_literal(ps, "false");
        break;
    case 'n':
        n->type = J_NULL;
        ok = parse_literal(ps, "null");
        break;
    default:
        n->type = J_NUMBER;
        ok = parse_number(ps);
        break;
    }
    if (!ok) {
        jfree(n);
        return NULL;
    }
    n->raw_len = (size_t)(ps->p - n->raw);
    return n;
}

/* A whole line must be exactly one JSON value plus optional whitespace. */
static jnode *parse_document(parser *ps)
{
    jnode *doc = parse_value(ps, 1);
    if (!doc)
        return NULL;
    skip_ws(ps);
    if (ps->p != ps->end) {
        jfree(doc);
        fail(ps, "trailing data after JSON document");
        return NULL;
    }
    return doc;
}

/* Matches an object's members against a fixed list of allowed names:
 * slots[i] receives the member called names[i], or stays NULL. A NULL obj
 * (absent params) behaves as {}. Returns the first unknown or repeated member,
 * with *dup telling which, or NULL when every member is allowed exactly once.
 * One linear pass, so a huge object cannot make this quadratic. */
static const jnode *pick_members(const jnode *obj, const char *const *names, size_t count,
                                 const jnode **slots, int *dup)
{
    for (size_t i = 0; i < count; i++)
        slots[i] = NULL;
    for (const jnode *m = obj ? obj->child : NULL; m; m = m->next) {
        size_t i = 0;
        while (i < count && !str_is(m->key, m->key_len, names[i]))
            i++;
        if (i == count || slots[i]) {
            *dup = i < count;
            return m;
        }
        slots[i] = m;
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
    char *data;
    size_t len, cap;
} sbuf;

static sbuf out; /* reused for every response */

static void sb_put(const char *s, size_t n)
{
    if (out.len + n > out.cap) {
        size_t cap = out.cap ? out.cap : 1024;
        while (cap < out.len + n)
            cap *= 2;
        char *p = realloc(out.data, cap);
        if (!p) {
            fputs("native-fixture: out of memory\n", stderr);
            exit(1);
        }
        out.data = p;
        out.cap = cap;
    }
    memcpy(out.data + out.len, s, n);
    out.len += n;
}

static void sb_lit(const char *s)
{
    sb_put(s, strlen(s));
}

/* Writes the bytes (no quotes) JSON-escaped. Input is valid UTF-8, which is
 * passed through; only quotes, backslashes and control characters need work. */
static void sb_escaped(const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0; /* bytes copied in bulk to keep the common case fast */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[7];
        if (c == '"')
            esc = "\\\"";
        else if (c == '\\')
            esc = "\\\\";
        else if (c == '\n')
            esc = "\\n";
        else if (c == '\r')
            esc = "\\r";
        else if (c == '\t')
            esc = "\\t";
        else if (c == '\b')
            esc = "\\b";
        else if (c == '\f')
            esc = "\\f";
        else if (c < 0x20) {
            memcpy(u, "\\u00", 4);
            u[4] = hex[c >> 4];
            u[5] = hex[c & 15];
            u[6] = '\0';
            esc = u;
        }
        if (!esc)
            continue;
        sb_put(s + run, i - run);
        sb_lit(esc);
        run = i + 1;
    }
    sb_put(s + run, n - run);
}

static void sb_string(const char *s, size_t n)
{
    sb_lit("\"");
    sb_escaped(s, n);
    sb_lit("\"");
}

static void send_line(void)
{
    sb_lit("\n");
    if (fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0)
        exit(1); /* the host is gone; nothing left to talk to */
    out.len = 0;
}

static void begin_response(const jnode *id)
{
    sb_lit("{\"jsonrpc\":\"2.0\",\"id\":");
    if (id)
        sb_put(id->raw, id->raw_len); /* echoed exactly as received */
    else
        sb_lit("null");
}

static void send_error(const jnode *id, int code, const char *prefix, const char *detail,
                       size_t detail_len, const char *suffix)
{
    char num[16];
    begin_response(id);
    snprintf(num, sizeof num, "%d", code);
    sb_lit(",\"error\":{\"code\":");
    sb_lit(num);
    sb_lit(",\"message\":\"");
    sb_escaped(prefix, strlen(prefix));
    if (detail) {
        /* Bound quoted client text so a 1 MiB method name cannot produce a
         * 1 MiB error; cut on a UTF-8 character boundary. */
        int cut = detail_len > MAX_ECHO;
        if (cut) {
            detail_len = MAX_ECHO;
            while (detail_len > 0 && ((unsigned char)detail[detail_len] & 0xC0) == 0x80)
                detail_len--;
        }
        sb_escaped(detail, detail_len);
        if (cut)
            sb_lit("...");
    }
    if (suffix)
        sb_escaped(suffix, strlen(suffix));
    sb_lit("\"}}");
    send_line();
}

/* Error whose message is a fixed string. */
static void send_simple(const jnode *id, int code, const char *message)
{
    send_error(id, code, message, NULL, 0, NULL);
}

static void timestamp_now(char buf[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ------------------------------------------------------------------------ */
/* Protocol                                                                 */
/* ------------------------------------------------------------------------ */

static struct {
    int initialized;
    int scope_metadata; /* project.metadata.read granted */
    int scope_files;    /* project.files.read granted */
} state;

/* Reports an unknown/duplicate/missing/mistyped params key as -32602. */
static void bad_params_key(const jnode *id, const jnode *m, int dup)
{
    send_error(id, E_PARAMS, dup ? "invalid params: duplicate key " : "invalid params: unknown key ",
               m->key, m->key_len, NULL);
}

static void handle_initialize(const jnode *id, const jnode *params)
{
    static const char *const names[] = {"protocolVersion", "hostVersion", "grantedScopes"};
    const jnode *f[3], *bad;
    int dup = 0;

    if (state.initialized) {
        send_simple(id, E_STATE, "initialize already called");
        return;
    }
    if ((bad = pick_members(params, names, 3, f, &dup))) {
        bad_params_key(id, bad, dup);
        return;
    }
    for (int i = 0; i < 3; i++) {
        if (!f[i]) {
            send_error(id, E_PARAMS, "invalid params: missing key ", names[i], strlen(names[i]), NULL);
            return;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (f[i]->type != J_STRING) {
            send_error(id, E_PARAMS, "invalid params: ", names[i], strlen(names[i]), " must be a string");
            return;
        }
    }
    int all_strings = f[2]->type == J_ARRAY;
    for (const jnode *s = all_strings ? f[2]->child : NULL; s; s = s->next)
        all_strings &= s->type == J_STRING;
    if (!all_strings) {
        send_simple(id, E_PARAMS, "invalid params: grantedScopes must be an array of strings");
        return;
    }
    if (!str_is(f[0]->str, f[0]->len, PROTOCOL_VERSION)) {
        send_error(id, E_PROTOCOL, "protocol mismatch: plugin speaks " PROTOCOL_VERSION ", host asked for ",
                   f[0]->str, f[0]->len, NULL);
        return;
    }
    /* Every grant must be one we requested, each at most once; the first
     * offending entry decides the error. Linear, since only two can be valid. */
    int meta = 0, files = 0;
    for (const jnode *s = f[2]->child; s; s = s->next) {
        int *seen = str_is(s->str, s->len, SCOPE_METADATA) ? &meta
                    : str_is(s->str, s->len, SCOPE_FILES)  ? &files
                                                           : NULL;
        if (!seen) {
            send_error(id, E_DENIED, "permission denied: scope ", s->str, s->len,
                       " was not requested by this plugin");
            return;
        }
        if (*seen) {
            send_error(id, E_PARAMS, "invalid params: duplicate scope ", s->str, s->len, NULL);
            return;
        }
        *seen = 1;
    }
    state.initialized = 1;
    state.scope_metadata = meta;
    state.scope_files = files;

    begin_response(id);
    sb_lit(",\"result\":{\"protocolVersion\":\"" PROTOCOL_VERSION "\",\"plugin\":{"
           "\"schemaVersion\":\"switchyard.plugin-manifest/v1\",\"id\":\"native-fixture\","
           "\"name\":\"Native fixture\",\"version\":\"1.0.0\","
           "\"protocolVersion\":\"" PROTOCOL_VERSION "\",\"capabilities\":[\"project.inspect\"],"
           "\"requestedScopes\":[\"" SCOPE_METADATA "\",\"" SCOPE_FILES "\"]},"
           "\"grantedScopes\":[");
    for (const jnode *s = f[2]->child; s; s = s->next) {
        sb_string(s->str, s->len);
        if (s->next)
            sb_lit(",");
    }
    sb_lit("]}}");
    send_line();
}

static void handle_health(const jnode *id, const jnode *params)
{
    char ts[32];
    if (params && params->child) {
        send_simple(id, E_PARAMS, "invalid params: plugin.health takes no params");
        return;
    }
    timestamp_now(ts);
    begin_response(id);
    sb_lit(",\"result\":{\"status\":\"healthy\",\"checkedAt\":\"");
    sb_lit(ts);
    sb_lit("\"}}");
    send_line();
}

static void handle_inspect(const jnode *id, const jnode *params)
{
    static const char *const top[] = {"project"};
    static const char *const names[] = {"id", "displayName", "root"};
    const jnode *p[1], *f[3], *bad;
    int dup = 0;
    char ts[32];

    if (!state.scope_metadata) {
        send_simple(id, E_DENIED, "permission denied: project.inspect needs scope " SCOPE_METADATA);
        return;
    }
    if ((bad = pick_members(params, top, 1, p, &dup))) {
        bad_params_key(id, bad, dup);
        return;
    }
    if (!p[0] || p[0]->type != J_OBJECT) {
        send_simple(id, E_PARAMS, "invalid params: project must be an object");
        return;
    }
    if ((bad = pick_members(p[0], names, 3, f, &dup))) {
        send_error(id, E_PARAMS, dup ? "invalid params: duplicate key project." : "invalid params: unknown key project.",
                   bad->key, bad->key_len, NULL);
        return;
    }
    for (int i = 0; i < 3; i++) {
        if ((i < 2 && !f[i]) || (f[i] && f[i]->type != J_STRING)) {
            send_error(id, E_PARAMS, "invalid params: project.", names[i], strlen(names[i]),
                       " must be a string");
            return;
        }
    }
    if (f[2] && !state.scope_files) {
        send_simple(id, E_DENIED, "permission denied: root sent without " SCOPE_FILES);
        return;
    }
    timestamp_now(ts);
    begin_response(id);
    sb_lit(",\"result\":{\"summary\":\"native fixture inspected ");
    sb_escaped(f[0]->str, f[0]->len);
    sb_lit("\",\"facts\":[{\"id\":\"fixture.project\",\"label\":\"Project\",\"value\":");
    sb_string(f[1]->str, f[1]->len);
    sb_lit(",\"source\":\"native-fixture\"}],\"actions\":[],\"warnings\":[],\"observedAt\":\"");
    sb_lit(ts);
    sb_lit("\"}}");
    send_line();
}

/* Validates the JSON-RPC envelope and routes the request. Any envelope
 * problem is answered as a parse error with a null id. */
static void handle_document(const jnode *doc)
{
    static const char *const names[] = {"jsonrpc", "id", "method", "params"};
    const jnode *f[4];
    int dup = 0;

    if (doc->type != J_OBJECT) {
        send_simple(NULL, E_PARSE, "parse error: request must be a JSON object");
        return;
    }
    if (pick_members(doc, names, 4, f, &dup)) {
        send_simple(NULL, E_PARSE, dup ? "parse error: duplicate key in request" : "parse error: unknown key in request");
        return;
    }
    if (!f[0] || f[0]->type != J_STRING || !str_is(f[0]->str, f[0]->len, "2.0")) {
        send_simple(NULL, E_PARSE, "parse error: jsonrpc must be \"2.0\"");
        return;
    }
    if (!f[1] || (f[1]->type != J_NUMBER && f[1]->type != J_STRING)) {
        send_simple(NULL, E_PARSE, "parse error: id must be a number or a string");
        return;
    }
    if (!f[2] || f[2]->type != J_STRING) {
        send_simple(NULL, E_PARSE, "parse error: method must be a string");
        return;
    }
    if (f[3] && f[3]->type != J_OBJECT) {
        send_simple(NULL, E_PARSE, "parse error: params must be an object");
        return;
    }

    const jnode *id = f[1], *params = f[3];
    const char *m = f[2]->str;
    size_t mlen = f[2]->len;
    int is_init = str_is(m, mlen, "initialize");
    int is_health = str_is(m, mlen, "plugin.health");
    int is_inspect = str_is(m, mlen, "project.inspect");
    int is_operate = str_is(m, mlen, "project.operate");

    if (!is_init && !is_health && !is_inspect && !is_operate)
        send_error(id, E_NO_METHOD, "method not found: ", m, mlen, NULL);
    else if (is_init)
        handle_initialize(id, params);
    else if (!state.initialized)
        send_simple(id, E_STATE, "initialize must be called first");
    else if (is_operate)
        send_simple(id, E_DENIED, "permission denied: capability project.operate is not declared by this plugin");
    else if (is_health)
        handle_health(id, params);
    else
        handle_inspect(id, params);
}

static void handle_line(const char *line, size_t len)
{
    parser ps = {line, line + len, NULL};
    skip_ws(&ps);
    if (ps.p == ps.end)
        return; /* blank lines are ignored */
    jnode *doc = parse_document(&ps);
    if (!doc) {
        send_error(NULL, E_PARSE, "parse error: ", ps.err, strlen(ps.err), NULL);
        return;
    }
    handle_document(doc);
    jfree(doc);
}

/* ------------------------------------------------------------------------ */
/* Line reader                                                              */
/* ------------------------------------------------------------------------ */

/* The only input buffer: one maximal line plus its newline. read(2) fills it
 * directly (no stdio buffer on top), so an oversized line never costs more
 * than this; once it overflows, bytes are dropped until the next newline. */
static char inbuf[MAX_LINE + 1];

int main(void)
{
    size_t start = 0;    /* first byte of the current line */
    size_t end = 0;      /* one past the last byte read */
    size_t scanned = 0;  /* bytes [start, scanned) are known to hold no newline */
    int discarding = 0;  /* inside an oversized line, skipping to its newline */

    for (;;) {
        char *nl = memchr(inbuf + scanned, '\n', end - scanned);
        if (nl) {
            size_t at = (size_t)(nl - inbuf);
            if (!discarding)
                handle_line(inbuf + start, at - start);
            discarding = 0;
            start = scanned = at + 1;
            continue;
        }
        scanned = end;
        if (discarding) /* still inside an oversized line: drop what we have */
            start = end = scanned = 0;
        if (start > 0) { /* slide the partial line to the front to make room */
            memmove(inbuf, inbuf + start, end - start);
            end -= start;
            scanned = end;
            start = 0;
        }
        if (end == sizeof inbuf) {
            /* MAX_LINE + 1 bytes and still no newline: the line is too long. */
            if (!discarding)
                send_simple(NULL, E_PARSE, "parse error: line exceeds 1048576 bytes");
            discarding = 1;
            start = end = scanned = 0;
        }
        ssize_t n = read(STDIN_FILENO, inbuf + end, sizeof inbuf - end);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            /* EOF (or a read error): answer a final unterminated line, then stop. */
            if (!discarding && end > 0)
                handle_line(inbuf, end);
            free(out.data);
            return n < 0 ? 1 : 0;
        }
        end += (size_t)n;
    }
}
