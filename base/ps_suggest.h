/*
 * ps_suggest — "did you mean" for unknown names: the candidate closest to
 * what was typed by edit distance (Levenshtein with adjacent transpositions),
 * so one helper serves options, commands, schedules, presets and generator
 * keys.
 *
 *   struct ps_suggest sg;
 *   ps_suggest_init(&sg, typed);
 *   for (each candidate) ps_suggest_add(&sg, name);
 *   ps_error(..., "unknown x '%s'%s", typed, ps_suggest_hint(&sg));
 *
 * A candidate counts only within max(1, strlen(typed) / 3) edits (or when
 * typed is a unique prefix of it), so "--out-dri" suggests "--out-dir" but
 * "--frobnicate" suggests nothing. Candidates are not copied: they must
 * outlive the struct. Cost: O(len(typed) x len(candidate)) per candidate,
 * names up to 63 bytes (longer ones are compared by their first 63).
 */
#ifndef PS_SUGGEST_H
#define PS_SUGGEST_H

#include <stddef.h>

struct ps_suggest {
    const char *typed;
    const char *best;
    int best_d, n_prefix;
    const char *prefix_of; /* the one candidate typed is a prefix of */
    char hint[96];
};

void ps_suggest_init(struct ps_suggest *sg, const char *typed);
void ps_suggest_add(struct ps_suggest *sg, const char *candidate);
/* The closest candidate, or NULL when none is close. */
const char *ps_suggest_best(const struct ps_suggest *sg);
/* "; did you mean 'x'?" or "" — to append to a message; lives in sg. */
const char *ps_suggest_hint(struct ps_suggest *sg);
/* The hint of typed against n names (NULL entries skipped) in one call:
 * init, add each, hint. For the fixed lists of enumerated values. */
const char *ps_suggest_among(struct ps_suggest *sg, const char *typed,
                             const char *const *names, size_t n);
/* Edit distance of a and b (each up to 63 bytes). */
int ps_edit_distance(const char *a, const char *b);

#endif
