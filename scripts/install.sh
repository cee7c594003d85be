#!/bin/sh
# make install / make uninstall (the Makefile passes DEST = $(DESTDIR)$(PREFIX)).
#   sh scripts/install.sh install BIN DEST
#   sh scripts/install.sh uninstall DEST
# install copies
#   BIN                           -> DEST/bin/pipesim
#   models/topologies, profiles   -> DEST/share/pipesim/topologies, profiles
#   studies/gpipe, torchgpipe     -> DEST/share/pipesim/gpipe, torchgpipe
#                                    (reference figures and prose templates)
#   docs/pipesim.1                -> DEST/share/man/man1/pipesim.1
#   scripts/pipesim-completion.bash -> DEST/share/bash-completion/completions/pipesim
# and lists every file it wrote in DEST/share/pipesim/MANIFEST; uninstall
# removes exactly those files, the manifest and the folders under
# share/pipesim, and leaves the shared folders (bin, share/man, ...) alone.
# The installed pipesim finds its data as share/pipesim beside its bin/
# folder (base/ps_data.h), so DEST may be a staging folder.
set -eu
cmd=${1:-}
case $cmd in
install)
    [ $# -eq 3 ] || { echo "usage: $0 install BIN DEST" >&2; exit 2; }
    bin=$2 dest=$3
    share=$dest/share/pipesim
    man=$dest/share/man/man1
    comp=$dest/share/bash-completion/completions
    [ -x "$bin" ] || { echo "install: $bin: not an executable" >&2; exit 1; }
    install -d "$dest/bin" "$share" "$man" "$comp"
    manifest=$share/MANIFEST.new
    : > "$manifest"
    put() { # SRC DST MODE
        install -m "$3" "$1" "$2"
        echo "$2" >> "$manifest"
    }
    put "$bin" "$dest/bin/pipesim" 755
    for pair in models/topologies:topologies models/profiles:profiles \
                studies/gpipe:gpipe studies/torchgpipe:torchgpipe; do
        src=${pair%%:*} dst=$share/${pair#*:}
        find "$src" -type f | LC_ALL=C sort | while IFS= read -r f; do
            d=$dst/${f#"$src"/}
            install -d "$(dirname "$d")"
            put "$f" "$d" 644
        done
    done
    put docs/pipesim.1 "$man/pipesim.1" 644
    put scripts/pipesim-completion.bash "$comp/pipesim" 644
    mv "$manifest" "$share/MANIFEST"
    echo "installed pipesim in $dest ($(wc -l < "$share/MANIFEST") files, listed in $share/MANIFEST)"
    ;;
uninstall)
    [ $# -eq 2 ] || { echo "usage: $0 uninstall DEST" >&2; exit 2; }
    dest=$2
    share=$dest/share/pipesim
    if [ ! -f "$share/MANIFEST" ]; then
        echo "uninstall: no $share/MANIFEST: pipesim is not installed in $dest" >&2
        exit 1
    fi
    n=0
    while IFS= read -r f; do
        case $f in "$dest"/*) ;; *)
            echo "uninstall: $share/MANIFEST names $f, outside $dest: refused" >&2; exit 1;;
        esac
        rm -f "$f"
        n=$((n + 1))
    done < "$share/MANIFEST"
    rm -f "$share/MANIFEST"
    # the folders install made under share/pipesim, deepest first, if empty
    find "$share" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    if [ -e "$share" ]; then
        echo "uninstall: $share still holds files install did not write; left in place" >&2
    fi
    echo "removed pipesim from $dest ($n files)"
    ;;
*)
    echo "usage: $0 install BIN DEST | uninstall DEST" >&2
    exit 2
    ;;
esac
