# pipesim — see README.md.
#   make demo        install missing Debian packages (as root), build, run the main job
#   make test        install, build, run everything (check with the sampled allocation-failure
#                    suite, asan, valgrind, fuzz; `make alloc` fails every allocation in turn)
#   make check       the fast unit and end-to-end suites
#   make bench       benchmarks, each figure beside its target
#   make             build only (says which packages are missing, installs nothing)
#   make asan | valgrind | alloc | fuzz [FUZZ_TIME=s] | install PREFIX=... | uninstall | clean
#
# Two stages. The targets above first run the `deps` step (scripts/deps.sh),
# then call this Makefile again with PIPESIM_STAGE=build: only that second
# make computes the library flags with pkg-config, so a first run on a bare
# machine sees the libraries that `deps` has just installed. The flags a
# build used are kept in $(BUILD)/FLAGS (git's GIT-CFLAGS): when they change,
# everything they affect is rebuilt.
CC       ?= cc
BUILD    ?= build
PREFIX   ?= /usr/local
OPT      ?= -O2 -g
.DEFAULT_GOAL := all

# Targets and the deps mode each needs (scripts/deps.sh check|demo|test).
DEPS_TEST  := test check layers asan alloc valgrind fuzz fuzz-bins coverage
DEPS_DEMO  := demo bench

.PHONY: all deps test check layers check-unit asan alloc valgrind fuzz \
        fuzz-bins demo bench install uninstall clean coverage doc-examples \
        doc-examples-update

# PREFIX is compiled into base/ps_data.o as a C string
ifneq ($(findstring ',$(PREFIX))$(findstring ",$(PREFIX))$(findstring \,$(PREFIX)),)
$(error PREFIX '$(PREFIX)' holds a quote or a backslash, which the build cannot take)
endif

ifneq ($(PIPESIM_STAGE),build)
# ---- stage 1: packages, then one build stage for all the goals --------------
GOALS     := $(if $(MAKECMDGOALS),$(MAKECMDGOALS),all)
BUILD_GOALS := $(filter-out clean deps,$(GOALS))
# uninstall reads the manifest only: no packages (a machine without the -dev
# packages uninstalls too)
NEEDS_DEPS := $(filter-out clean deps uninstall,$(GOALS))
DEPS_MODE := $(if $(filter $(DEPS_TEST) %/tests/% tests/%,$(GOALS)),test,$(if $(filter $(DEPS_DEMO),$(GOALS)),demo,check))
stage1: $(filter clean,$(GOALS))
	@$(if $(NEEDS_DEPS),sh scripts/deps.sh $(DEPS_MODE),:)
	@$(MAKE) --no-print-directory PIPESIM_STAGE=build $(BUILD_GOALS)
$(BUILD_GOALS): stage1
	@:
deps:
	@sh scripts/deps.sh test
clean:
	rm -rf build
Makefile: ;
.PHONY: stage1
else
# ---- stage 2: the build ------------------------------------------------------
PKGS     := gsl jansson sqlite3 openblas
# GSL's pkg-config pulls in its own CBLAS; OpenBLAS provides CBLAS, so drop it.
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   := $(filter-out -lgslcblas,$(shell pkg-config --libs $(PKGS)))
CRIT_LIBS  := $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion)
# The data folder's last two candidates (base/ps_data.h): this source tree
# (build/pipesim), then the share folder of PREFIX. Only base/ps_data.o is
# built with them (recorded in $(BUILD)/DATAFLAGS), so another PREFIX
# rebuilds that one object, not the tree.
DATA_CFLAGS := -DPIPESIM_SHARE_DIR='"$(PREFIX)/share/pipesim"' -DPIPESIM_SRC_DIR='"$(CURDIR)"'
CFLAGS   += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter \
            $(OPT) -MMD -MP -I. $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LDLIBS   += $(PKG_LIBS) -lpthread -lm $(EXTRA_LDLIBS)

# MPI backend of pipesim validate (runtime/rt_mpi*.c), when Open MPI or MPICH is there.
MPI_PKG  := $(firstword $(foreach p,ompi-c mpich,$(shell pkg-config --exists $(p) 2>/dev/null && echo $(p))))
ifneq ($(MPI_PKG),)
CFLAGS   += -DPIPESIM_MPI $(shell pkg-config --cflags $(MPI_PKG))
LDLIBS   += $(shell pkg-config --libs $(MPI_PKG))
endif

LIB_DIRS := base models sched traces sim runtime analysis measure studies
LIB_SRC  := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
CLI_SRC  := $(wildcard cli/*.c)
TEST_SRC := $(wildcard tests/test_*.c)
BENCH_SRC:= $(wildcard bench/*.c)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_BIN:= $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
LIBA     := $(BUILD)/libpipesim.a
BIN      := $(BUILD)/pipesim
FLAGS    := $(BUILD)/FLAGS

# The slow suite: `make check` leaves test_alloc to `make test`, whose check-unit
# runs it on a sample of allocations (`make alloc`: every allocation).
SLOW_TESTS := test_alloc
CHECK_BIN  := $(filter-out $(SLOW_TESTS:%=$(BUILD)/tests/%),$(TEST_BIN))

all: $(BIN)

# Rewritten only when the flags differ, so an unchanged build stays up to date.
$(FLAGS): FORCE
	@mkdir -p $(BUILD)
	@printf '%s\n' '$(subst ','\'',$(CC) $(CFLAGS) $(CLI_MAIN_FLAGS) | $(LDLIBS))' > $@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else \
	  [ -f $@ ] && echo "flags changed: rebuilding $(BUILD)"; mv $@.new $@; fi
FORCE:

$(BUILD)/%.o: %.c $(FLAGS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/DATAFLAGS: FORCE
	@mkdir -p $(BUILD)
	@printf '%s\n' '$(subst ','\'',$(DATA_CFLAGS))' > $@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
$(BUILD)/base/ps_data.o: base/ps_data.c $(FLAGS) $(BUILD)/DATAFLAGS
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DATA_CFLAGS) -c $< -o $@

# The fuzz build renames the CLI's main() so a fuzz target can call it.
$(BUILD)/cli/pipesim.o: CFLAGS += $(CLI_MAIN_FLAGS)

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIBA)
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(LIBA) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(LIBA) $(BIN) $(FLAGS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBA) $(CRIT_LIBS) $(LDLIBS)

# The allocation-failure shim for tests/test_alloc.c: preloaded, so built
# without the sanitizers (it forwards to their allocator).
$(BUILD)/tests/alloc_fail.so: tests/alloc_fail.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -O2 -fPIC -shared -o $@ $< -ldl

$(BUILD)/bench/%: bench/%.c $(LIBA) $(FLAGS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O3 -o $@ $< $(LIBA) $(LDLIBS)

# Every Criterion binary runs from the repository root with PIPESIM=$(BIN).
# Sanitizer reports from Criterion's forked workers do not always change the
# exit status, so the log is also searched for them. Criterion's runner
# process, which runs no test, is not leak-checked (tests/lsan_runner.h: its
# own 48-byte leak); the workers that run the tests are, and a leak in a
# test or pipesim's code still fails (tests/test_lsan_supp.c). tests/lsan.supp
# names no library.
export LSAN_OPTIONS := suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
RUN_TESTS ?= $(TEST_BIN)
check-unit: $(BIN) $(RUN_TESTS) $(BUILD)/tests/alloc_fail.so
	@fail=0; for t in $(RUN_TESTS); do \
	  s=$$(date +%s); \
	  PIPESIM=$(abspath $(BIN)) $$t --jobs 2 >$$t.log 2>&1 || fail=1; \
	  cat $$t.log; \
	  if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' $$t.log; then \
	    echo "!! sanitizer report in $$t"; fail=1; fi; \
	  echo "== $$t: $$(( $$(date +%s) - s )) s"; \
	done; exit $$fail

# Runs one part, prints how long it took, keeps going, fails at the end.
define part
	@s=$$(date +%s); $(MAKE) --no-print-directory $(2) || echo $(1) >> $(BUILD)/parts.failed; \
	  echo "== $(1): $$(( $$(date +%s) - s )) s" | tee -a $(BUILD)/parts.time
endef
define parts_begin
	@mkdir -p $(BUILD); rm -f $(BUILD)/parts.failed $(BUILD)/parts.time
endef
define parts_end
	@echo "== time per part:"; cat $(BUILD)/parts.time
	@if [ -s $(BUILD)/parts.failed ]; then echo "!! failed: $$(cat $(BUILD)/parts.failed | tr '\n' ' ')"; exit 1; fi
endef

# The include lines against the allowed edges between folders (scripts/layers.sh).
layers:
	@sh scripts/layers.sh .

# The example outputs in README.md and docs/ against what $(BIN) prints
# (scripts/doc-examples.sh); doc-examples-update rewrites them.
doc-examples: $(BIN)
	@sh scripts/doc-examples.sh --bin $(BIN)
doc-examples-update: $(BIN)
	@sh scripts/doc-examples.sh --update --bin $(BIN)

check:
	$(parts_begin)
	$(call part,layers,layers)
	$(call part,build,-j2 $(BIN) $(CHECK_BIN) $(BUILD)/tests/alloc_fail.so)
	$(call part,unit+e2e,RUN_TESTS="$(CHECK_BIN)" check-unit)
	$(call part,doc-examples,doc-examples)
	$(parts_end)

test:
	$(parts_begin)
	$(call part,layers,layers)
	$(call part,build,-j2 $(BIN) $(TEST_BIN) $(BUILD)/tests/alloc_fail.so)
	$(call part,unit+e2e,check-unit)
	$(call part,doc-examples,doc-examples)
	$(call part,asan,asan)
	$(call part,valgrind,valgrind)
	$(call part,fuzz,fuzz FUZZ_RUNS=$(FUZZ_CI_RUNS))
	$(parts_end)

# The end-to-end commands, good and bad input, under valgrind memcheck.
valgrind: $(BIN)
	@sh scripts/valgrind.sh $(BIN)

SAN_VARS := OPT="-O1 -g -fno-omit-frame-pointer" \
  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
  EXTRA_LDLIBS="-fsanitize=address,undefined"
# Allocation failure at every N (or a fixed sample), with the ASan binary (LeakSanitizer on).
alloc:
	@$(MAKE) --no-print-directory -j2 BUILD=build/asan $(SAN_VARS) build/asan/pipesim build/asan/tests/test_alloc
	@PIPESIM_ALLOC_ALL=1 $(MAKE) --no-print-directory BUILD=build/asan $(SAN_VARS) \
	  RUN_TESTS=build/asan/tests/test_alloc check-unit

# The whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
asan:
	@$(MAKE) --no-print-directory -j2 BUILD=build/asan $(SAN_VARS) \
	  $(subst $(BUILD)/,build/asan/,$(BIN) $(TEST_BIN)) build/asan/tests/alloc_fail.so
	@$(MAKE) --no-print-directory BUILD=build/asan $(SAN_VARS) check-unit

# Line coverage per folder (gcov + lcov): the fast suite on a --coverage build.
coverage:
	@$(MAKE) --no-print-directory -j2 BUILD=build/cov OPT="-O0 -g --coverage" \
	  EXTRA_LDLIBS=--coverage $(subst $(BUILD)/,build/cov/,$(BIN) $(CHECK_BIN))
	@find build/cov -name '*.gcda' -delete
	@$(MAKE) --no-print-directory BUILD=build/cov OPT="-O0 -g --coverage" EXTRA_LDLIBS=--coverage \
	  RUN_TESTS="$(subst $(BUILD)/,build/cov/,$(CHECK_BIN))" check-unit >build/cov/check.log 2>&1 || \
	  { tail -30 build/cov/check.log; exit 1; }
	@sh scripts/coverage.sh build/cov

# libFuzzer targets (tests/fuzz/fuzz_*.c), everything rebuilt with clang in
# build/fuzz. `make fuzz` runs each for FUZZ_TIME seconds from its seed
# corpus tests/fuzz/corpus/<target> (new inputs go to build/fuzz/corpus,
# findings to build/fuzz/artifacts) after replaying tests/fuzz/regress/.
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN  := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/%)
FUZZ_TIME ?= 5
FUZZ_CI_RUNS ?= 20000
FUZZ_SAN  := -fsanitize=address,undefined -fno-sanitize-recover=undefined
fuzz-bins: $(FUZZ_BIN)
$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(CLI_OBJ) $(LIBA) $(FLAGS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(CLI_OBJ) $(LIBA) $(LDLIBS)
fuzz:
	@$(MAKE) --no-print-directory -j2 BUILD=build/fuzz CC=clang OPT="-O1 -g -fno-omit-frame-pointer" \
	  EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" EXTRA_LDLIBS="$(FUZZ_SAN)" \
	  CLI_MAIN_FLAGS=-Dmain=pipesim_main fuzz-bins
	@FUZZ_RUNS=$(FUZZ_RUNS) sh tests/fuzz/run.sh build/fuzz $(FUZZ_TIME)

demo: $(BIN)
	sh scripts/demo.sh $(BIN)

bench: $(BIN) $(BENCH_BIN)
	@for b in $(BENCH_BIN); do $$b || exit 1; done

# The program, its data (topologies, profiles, the studies' reference figures
# and templates: share/pipesim), the man page and bash completion; every
# file listed in share/pipesim/MANIFEST, which uninstall removes exactly
# (scripts/install.sh). The installed program finds share/pipesim beside
# its bin/ folder, so a DESTDIR staging tree works as it is.
install: $(BIN)
	@sh scripts/install.sh install $(BIN) "$(DESTDIR)$(PREFIX)"

uninstall:
	@sh scripts/install.sh uninstall "$(DESTDIR)$(PREFIX)"

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
endif
