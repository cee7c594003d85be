/* The layering check (scripts/layers.sh): the tree passes it, and a tree
 * with an include that goes up a layer, or sideways between two replayers,
 * fails it naming the file, the line and the edge. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void put(const char *rel, const char *text) { th_put(dir, rel, text); }

static void tree(void)
{
    th_tmpdir(dir, sizeof dir, "layers");
    cr_assert_eq(th_sh("mkdir -p %s/base %s/models %s/sched %s/sim %s/runtime", dir, dir, dir,
                       dir, dir), 0);
    put("base/ps_a.h", "#include <stdio.h>\n");
    put("models/mdl_a.c", "#include \"models/mdl_a.h\"\n#include \"base/ps_a.h\"\n");
    put("sched/sch_a.c", "#include \"models/mdl_a.h\"\n#include \"base/ps_a.h\"\n");
}

static void rmtree(void) { th_sh("rm -rf %s", dir); }

Test(layers, the_tree_keeps_its_layers)
{
    cr_assert_eq(th_sh("sh scripts/layers.sh . >/dev/null"), 0,
                 "an include breaks the layering: run sh scripts/layers.sh");
}

Test(layers, a_clean_tree_passes, .init = tree, .fini = rmtree)
{
    cr_assert_eq(th_sh("sh scripts/layers.sh %s >/dev/null", dir), 0);
}

Test(layers, an_include_of_a_higher_layer_fails, .init = tree, .fini = rmtree)
{
    put("models/mdl_b.c", "#include <string.h>\n#include \"base/ps_a.h\"\n#include \"sim/sim_engine.h\"\n");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "sh scripts/layers.sh %s 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char line[256] = "";
    cr_assert(fgets(line, sizeof line, p));
    cr_assert_neq(pclose(p), 0);
    cr_assert(strstr(line, "models/mdl_b.c:3: models -> sim (sim/sim_engine.h)"), "%s", line);
}

Test(layers, the_runtime_may_not_include_the_engine, .init = tree, .fini = rmtree)
{
    put("runtime/rt_a.h", "#include \"sched/sch_a.h\"\n#include \"sim/sim_engine.h\"\n");
    cr_assert_eq(th_sh("sh scripts/layers.sh %s >/dev/null 2>&1", dir), 1);
}

Test(layers, a_base_header_may_include_no_other_folder, .init = tree, .fini = rmtree)
{
    put("base/ps_b.h", "#include \"models/mdl_a.h\"\n");
    cr_assert_neq(th_sh("sh scripts/layers.sh %s >/dev/null 2>&1", dir), 0);
}
