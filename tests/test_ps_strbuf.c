/* ps_strbuf: appends, growth, and the out-of-memory flag reported once. */
#include "helpers.h"

#include "base/ps_error.h"
#include "base/ps_strbuf.h"

#include <stdint.h>

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
