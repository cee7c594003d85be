/*
 * ps_util — small shared helpers: strict number parsing, integer lists,
 * file hashes, byte counts and CSV fields for output; and, through base/ps_afile.h, the output files (atomic
 * replacement, devices and FIFOs in place, same-file checks, temporaries
 * removed on signals).
 */
#ifndef PS_UTIL_H
#define PS_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "base/ps_afile.h"

/* Strict parses: the whole string must be a finite number; errors name what. */
/* strtod, decimal only: a hexadecimal number ("0x10", "-0X1p3"), which
 * strtod would take, converts nothing (*end = s), so every reader refuses
 * it as it refuses other non-numbers. */
double ps_strtod(const char *s, char **end);
/* The decimal number s (one ps_strtod takes whole, finite) times 10^shift,
 * rounded once: its exponent moved, so "0.06" at -3 is the double nearest
 * 6e-5, where strtod("0.06") / 1e3 rounds twice and can miss it by an ulp.
 * Text that is not such a number: ps_strtod(s) * 10^shift. */
double ps_strtod_exp(const char *s, int shift);
int ps_parse_double(const char *s, const char *what, double *out);
/* A text file's first NUL byte: 1 and its line and column (1-based, bytes),
 * or 0 when buf[0..len) has none. */
int ps_nul_at(const char *buf, size_t len, int *line, int *col);
int ps_parse_long(const char *s, const char *what, long lo, long hi, long *out);
/* "1,2,4,8" -> malloc'd array of n values in [lo, hi]. */
int ps_parse_long_list(const char *s, const char *what, long lo, long hi,
                        long **out, int *n);
/* A count in any decimal notation of a whole number ("8", "8.0", "1e3"), in
 * [lo, hi] (lo, hi below 2^53): --batch everywhere, so that the spelling
 * predict takes is one sweep, report and plot take (helper-138); a list of
 * them as ps_parse_long_list. */
int ps_parse_count(const char *s, const char *what, long lo, long hi, long *out);
int ps_parse_count_list(const char *s, const char *what, long lo, long hi, long **out, int *n);

/* A positive byte count with an optional unit (B, k/K/kB/KB, M/MB, G/GB,
 * T/TB: powers of 1000; KiB, MiB, GiB, TiB), "16e9", "16G", "12GiB": whole
 * bytes, at least one (a count without a unit must be whole; a unit's
 * fraction rounds down); errors name what. */
int ps_parse_bytes(const char *s, const char *what, double *out);

/* FNV-1a 64 of a file's bytes, as 16 hex digits into hex[17]. */
int ps_file_hash(const char *path, char hex[17]);
uint64_t ps_fnv1a(const void *p, size_t n, uint64_t h);
#define PS_FNV_INIT 0xcbf29ce484222325ULL

/* Bytes in binary units for tables, the way device memory is sold and
 * reported (a 16 GiB P100 reads "16.00 GiB"): "512 B", "1.50 KiB", ...
 * "2.00 PiB" (powers of 1024, two decimals above bytes); from 1000 PiB on,
 * bytes in exponent notation ("1.00e+300 B"), so a buffer of 16 bytes
 * always holds it. Every table that prints memory uses it, so one style
 * holds everywhere. */
void ps_human_bytes(double bytes, char *buf, size_t n);
#define PS_GIB 1073741824.0
/* A duration for tables: 3 decimals in the unit that puts it in [1, 1000)
 * — "19.393 s", "427.852 ms", "12.500 us", "40 ns"; "0 s" for 0, "-" for
 * NaN or infinity. Every table that prints a step or op time uses it. */
void ps_human_seconds(double s, char *buf, size_t n);
/* A signed duration (a discrepancy, a drift) as ps_human_seconds with its
 * sign: "+19.860 ms", "-3.500 us"; "0 s" for 0, "-" for NaN or infinity. */
void ps_human_seconds_delta(double s, char *buf, size_t n);
/* A count (of parameters) for tables: "526" below a thousand, else two
 * decimals and the word: "526.34 thousand", "2.10 million", "1.34 billion",
 * "1.00 trillion", "2000.00 trillion"; from a million trillion on, exponent
 * notation ("1.00e+300"). Every table that prints a parameter count uses it. */
void ps_human_count(double v, char *buf, size_t n);
/* A figure for tables (a rate, a ratio, GiB) with the given decimals, "%.*f",
 * unless that would print a value that is not 0 as zero ("0.00"): then three
 * significant digits, "%.3g" ("1.63e-04", "0.000977"). A table's zero is
 * then a true zero, as JSON's is (helper-114: a throughput of 1.6e-4
 * samples/s printed 0.00). The tables' throughputs, speedups and GiB use
 * it; their percentages (bubble, busy) keep fixed decimals. */
void ps_fixed(double v, int decimals, char *buf, size_t n);
/* Whether c is a control character (below 0x20, or DEL), which a table line
 * or a summary shows as '?' so that a name quoted in it (a file name with a
 * newline) keeps the line whole, as messages do (ps_error). */
int ps_is_ctrl(int c);
/* The first len bytes of s (len < 0: all of it) onto f, control characters
 * as '?'. CSV and JSON keep names whole instead. */
void ps_put_printable(FILE *f, const char *s, int len);
/* s's control characters as '?', in place; returns s. */
char *ps_printable_in_place(char *s);

/* v as the shortest of %.15g, %.16g and %.17g that strtod reads back to the
 * same double (0.1 is "0.1", 0.1 + 0.2 "0.30000000000000004"; NaN and
 * infinities as printf writes them), into buf of n >= PS_DBL_LEN bytes;
 * returns buf. Every CSV (and trace metadata) writer prints reals with it:
 * exact for machines, no float noise for people. Cost: up to three
 * snprintf/strtod pairs. PS_DBL(v) is the same into a buffer that lives
 * until the end of the enclosing statement's block, for printf arguments. */
/* Microseconds (a trace's unit) as whole nanoseconds: the whole microseconds
 * scaled apart from the fraction, exact where the double holds the
 * microseconds (llround(us * 1000) in one double rounded an epoch time of
 * 1.7e15 us to 256 ns). The caller bounds us. */
int64_t ps_us_to_ns(double us);
#define PS_DBL_LEN 32
const char *ps_fmt_double(double v, char *buf, size_t n);
#define PS_DBL(v) ps_fmt_double((v), (char[PS_DBL_LEN]){ 0 }, PS_DBL_LEN)
/* v x 10^shift (seconds as ms: 3) in the fewest digits, 15 to 17, that
 * ps_strtod_exp(text, -shift) takes back to v exactly: 6e-5 s is "0.06",
 * where PS_DBL(6e-5 * 1e3) wrote 0.060000000000000005 (helper-139); else
 * as PS_DBL(v x 10^shift). The profile readers read ms so. */
const char *ps_fmt_exp(double v, int shift, char *buf, size_t n);
#define PS_MS(s) ps_fmt_exp((s), 3, (char[PS_DBL_LEN]){ 0 }, PS_DBL_LEN)
/* A stream writing into memory, as open_memstream but one whose failures
 * show: a write that cannot grow the buffer fails with ENOMEM and sets the
 * stream's error flag (glibc's memory stream drops the bytes with the flag
 * clear, and when its closing realloc fails frees the buffer and still
 * returns 0). ps_memstream_close closes it: 0 with the text in *buf
 * (NUL-terminated, *len bytes, the caller frees it; "" when nothing was
 * written), or -1 with *buf NULL and *len 0 when any write failed (the
 * caller reports out of memory). NULL from open is out of memory. */
FILE *ps_memstream_open(char **buf, size_t *len);
int ps_memstream_close(FILE *f, char **buf, size_t *len);

/* s as one CSV field: in double quotes, each '"' doubled (RFC 4180). */
void ps_csv_str(FILE *f, const char *s);

/* Reads a whole file into a malloc'd NUL-terminated buffer; from a device
 * or pipe at most PS_READ_MAX bytes (more is PS_EIO: an endless one such as
 * /dev/zero is never a hang), a regular file whole. The file is recorded as
 * a command's input (ps_io_read, base/ps_afile.h). */
#define PS_READ_MAX (1 << 30)
int ps_read_file(const char *path, char **buf, size_t *len);

/* s (NUL-terminated) with a UTF-8 character cut at its end removed: a copy
 * into a fixed buffer can stop inside one, and JSON written from it does not
 * read back. Only a lead byte whose continuation bytes are missing goes. */
void ps_utf8_trim_cut(char *s);

/* Bytes of a UTF-8 byte-order mark at the start of text (3), else 0: the
 * loaders skip it (editors on Windows write one), lines and columns count
 * from after it. */
static inline size_t ps_bom_len(const char *text, size_t len)
{
    return len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
                   (unsigned char)text[2] == 0xBF
               ? 3
               : 0;
}

#define PS_VERSION "0.1.0"

#endif
