# pipesim — see README.md. `make`, `make test`, `make demo`, `make bench`,
# `make asan`, `make valgrind`, `make fuzz [FUZZ_TIME=s]`, `make alloc`,
# `make install PREFIX=...`, `make clean`.
CC       ?= cc
BUILD    ?= build
PREFIX   ?= /usr/local
PKGS     := gsl jansson sqlite3 openblas
OPT      ?= -O2 -g
# GSL's pkg-config pulls in its own CBLAS; OpenBLAS provides CBLAS, so drop it.
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(filter-out -lgslcblas,$(shell pkg-config --libs $(PKGS) 2>/dev/null))
CRIT_LIBS  := $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion)
CFLAGS   += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter \
            $(OPT) -MMD -MP -I. $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LDLIBS   += $(PKG_LIBS) -lpthread -lm $(EXTRA_LDLIBS)

# MPI backend of pipesim validate (runtime/rt_mpi*.c), when Open MPI or MPICH is there.
MPI_PKG  := $(firstword $(foreach p,ompi-c mpich,$(shell pkg-config --exists $(p) 2>/dev/null && echo $(p))))
ifneq ($(MPI_PKG),)
CFLAGS   += -DPIPESIM_MPI $(shell pkg-config --cflags $(MPI_PKG))
LDLIBS   += $(shell pkg-config --libs $(MPI_PKG))
endif

LIB_DIRS := models sim traces analysis runtime
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

.PHONY: all deps test check-unit asan demo bench install clean fuzz fuzz-bins valgrind alloc
all: $(BIN)

deps:
	@sh scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The fuzz build renames the CLI's main() so a fuzz target can call it.
$(BUILD)/cli/pipesim.o: CFLAGS += $(CLI_MAIN_FLAGS)

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIBA)
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(LIBA) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(LIBA) $(BIN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBA) $(CRIT_LIBS) $(LDLIBS)

# The allocation-failure shim for tests/test_alloc.c: preloaded, so built
# without the sanitizers (it forwards to their allocator).
$(BUILD)/tests/alloc_fail.so: tests/alloc_fail.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -O2 -fPIC -shared -o $@ $< -ldl

$(BUILD)/bench/%: bench/%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O3 -o $@ $< $(LIBA) $(LDLIBS)

# Every Criterion binary runs from the repository root with PIPESIM=$(BIN).
# Sanitizer reports from Criterion's forked workers do not always change the
# exit status, so the log is also searched for them.
check-unit: $(BIN) $(TEST_BIN) $(BUILD)/tests/alloc_fail.so
	@fail=0; for t in $(TEST_BIN); do \
	  echo "== $$t"; PIPESIM=$(abspath $(BIN)) $$t --jobs 2 >$$t.log 2>&1 || fail=1; \
	  cat $$t.log; \
	  if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' $$t.log; then \
	    echo "!! sanitizer report in $$t"; fail=1; fi; \
	done; exit $$fail

test: deps
	@$(MAKE) --no-print-directory check-unit
	@$(MAKE) --no-print-directory asan
	@$(MAKE) --no-print-directory valgrind
	@FUZZ_RUNS=$(FUZZ_CI_RUNS) $(MAKE) --no-print-directory fuzz

# The end-to-end commands, good and bad input, under valgrind memcheck.
valgrind: $(BIN)
	@sh scripts/valgrind.sh $(BIN)

# Allocation failure at every N, with the ASan binary (LeakSanitizer on).
alloc:
	@$(MAKE) --no-print-directory BUILD=build/asan OPT="-O1 -g -fno-omit-frame-pointer" \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
	  EXTRA_LDLIBS="-fsanitize=address,undefined" TEST_BIN=build/asan/tests/test_alloc check-unit

# The whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
asan:
	@$(MAKE) --no-print-directory BUILD=build/asan OPT="-O1 -g -fno-omit-frame-pointer" \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
	  EXTRA_LDLIBS="-fsanitize=address,undefined" check-unit

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
$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(CLI_OBJ) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(CLI_OBJ) $(LIBA) $(LDLIBS)
fuzz:
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang OPT="-O1 -g -fno-omit-frame-pointer" \
	  EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" EXTRA_LDLIBS="$(FUZZ_SAN)" \
	  CLI_MAIN_FLAGS=-Dmain=pipesim_main fuzz-bins
	@sh tests/fuzz/run.sh build/fuzz $(FUZZ_TIME)

demo: deps $(BIN)
	sh scripts/demo.sh $(BIN)

bench: deps $(BIN) $(BENCH_BIN)
	@for b in $(BENCH_BIN); do $$b || exit 1; done

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/pipesim
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/pipesim
	cp -r models/profiles models/topologies $(DESTDIR)$(PREFIX)/share/pipesim/

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
