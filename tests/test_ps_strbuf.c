/* ps_strbuf: appends, growth, and the out-of-memory flag reported once. */
#include "helpers.h"

#include "base/ps_error.h"
#include "base/ps_strbuf.h"
#include "base/ps_util.h"

#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

Test(ps_strbuf, appends_in_order_and_grows)
{
    struct ps_strbuf b = PS_STRBUF_INIT;
    cr_assert_str_eq(ps_strbuf_str(&b), "");
    ps_strbuf_puts(&b, "set title ");
    ps_strbuf_printf(&b, "\"%s\" %d", "x", 42);
    ps_strbuf_add(&b, "\nplot", 5);
    cr_assert_str_eq(ps_strbuf_str(&b), "set title \"x\" 42\nplot");
    cr_assert_eq(b.len, strlen("set title \"x\" 42\nplot"));
    /* past the first allocation: every byte kept */
    for (int i = 0; i < 5000; i++)
        ps_strbuf_printf(&b, "%d,", i % 10);
    cr_assert_eq(b.len, 21 + 10000);
    cr_assert_eq(b.s[b.len], 0);
    cr_assert(b.cap > b.len);
    cr_assert_eq(b.s[21 + 2 * 4321], '1');
    cr_assert_eq(ps_strbuf_error(&b), 0);
    ps_strbuf_release(&b);
    cr_assert_null(b.s);
    ps_strbuf_release(&b); /* twice is fine */
}

Test(ps_strbuf, out_of_memory_is_remembered_and_reported_at_the_end)
{
    struct ps_strbuf b;
    ps_strbuf_init(&b);
    ps_strbuf_puts(&b, "before");
    /* an append no allocator can satisfy: larger than any object may be */
    ps_strbuf_add(&b, "", (size_t)PTRDIFF_MAX);
    cr_assert(b.oom);
    /* later appends are dropped, not glued onto a text with a hole */
    ps_strbuf_puts(&b, "after");
    ps_strbuf_printf(&b, "%d", 7);
    cr_assert_eq(b.len, 6);
    cr_assert_str_eq(ps_strbuf_str(&b), "");
    ps_error_clear();
    cr_assert_eq(ps_strbuf_error(&b), -PS_ENOMEM);
    cr_assert_str_eq(ps_errmsg(), "out of memory");
    ps_strbuf_release(&b);
    cr_assert_eq(b.oom, 0);
    cr_assert_eq(ps_strbuf_error(&b), 0);
}

/* ps_memstream (base/ps_util.h): the text whole; a write it cannot hold is
 * a failure at close, never bytes silently dropped. */
Test(ps_memstream, keeps_every_byte_and_reports_a_failed_write)
{
    char *buf;
    size_t len;
    FILE *f = ps_memstream_open(&buf, &len);
    cr_assert_not_null(f);
    for (int i = 0; i < 30000; i++)
        fprintf(f, "%d,", i % 10);
    fputs("end", f);
    cr_assert_eq(ps_memstream_close(f, &buf, &len), 0);
    cr_assert_eq(len, 60003);
    cr_assert_eq(strlen(buf), len);
    cr_assert_eq(buf[2 * 12345], '5');
    cr_assert_str_eq(buf + 60000, "end");
    free(buf);
    /* nothing written: an empty string, not NULL */
    f = ps_memstream_open(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(ps_memstream_close(f, &buf, &len), 0);
    cr_assert_str_eq(buf, "");
    cr_assert_eq(len, 0);
    free(buf);
    /* a write the buffer cannot grow for (address space capped in a child;
     * not under ASan, whose shadow memory needs the space) */
#if !defined(__SANITIZE_ADDRESS__)
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        struct rlimit rl;
        FILE *st = fopen("/proc/self/statm", "r");
        unsigned long pages = 0;
        if (!st || fscanf(st, "%lu", &pages) != 1)
            _exit(3);
        fclose(st);
        rl.rlim_cur = rl.rlim_max = pages * (rlim_t)sysconf(_SC_PAGESIZE) + (64 << 20);
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(4);
        if (!(f = ps_memstream_open(&buf, &len)))
            _exit(5);
        static char block[1 << 16];
        memset(block, 'x', sizeof block);
        for (int i = 0; i < 4096; i++) /* 256 MiB */
            fwrite(block, 1, sizeof block, f);
        _exit(ps_memstream_close(f, &buf, &len) == -1 && !buf && len == 0 ? 0 : 6);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
#endif
}
