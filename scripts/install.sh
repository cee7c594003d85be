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
# and lists in DEST/share/pipesim/MANIFEST, relative to DEST, every file it
# wrote and (ending in /) every folder it created, so that a staging tree
# (DESTDIR) moved into place uninstalls from there. Installing again over an
# install removes the files the earlier manifest lists and this one does not
# (a preset renamed or dropped would otherwise stay a bundled name).
# uninstall removes exactly the files listed, then the folders listed and
# those under share/pipesim, deepest first, where empty; folders that were
# there before install (bin, share/man, ...) stay. A manifest of an older
# install (absolute paths) is read too, its paths checked to lie under DEST.
# The installed pipesim finds its data as share/pipesim beside its bin/
# folder (base/ps_data.h), so DEST may be a staging folder.
set -eu

# DEST without trailing slashes ("/" stays "/")
trim() {
    d=$1
    while [ "${d%/}" != "$d" ] && [ "$d" != / ]; do d=${d%/}; done
    printf '%s' "$d"
}

# The manifest's first line says its format; one without it is an older
# install's, which listed DEST/path as DEST was given (absolute or relative).
HEADER='# pipesim manifest 2: paths relative to PREFIX; a folder install made ends in /'

# "./a//b/" -> "a/b/": slashes squeezed and a leading "./" dropped, for
# comparing an older line with DEST
squeeze() { printf '%s' "$1" | tr -s / | sed 's|^\./||'; }

# Prints MANIFEST line $1 as a path relative to DEST ($2), or fails naming it.
# A line of a manifest without the header ($3 = old) is DEST/path as DEST was
# spelt then (relative or absolute, another spelling of the same folder too:
# ./rel, its absolute path, through a link), or a path relative to DEST (the
# first installs that listed them so, before the header); no line may climb
# out through "..".
relpath() {
    line=$1 dest=$2
    [ "$line" = ./ ] && { printf '%s' "$line"; return 0; } # DEST itself, made by install
    if [ "$3" = old ]; then
        l=$(squeeze "$line")
        found=
        for d in "$spelt_as" "$spelt_here" "$spelt_real"; do # read_manifest's
            [ -n "$d" ] || continue
            case $l in "$d"?*) line=${l#"$d"} found=1; break ;; esac
        done
        if [ -z "$found" ]; then
            case $l in /*) return 1 ;; esac
            line=$l
            # DEST spelt from another folder then ("rel" for /tmp/x/rel): the
            # shortest tail of the line that names a file under DEST now
            t=$l
            while [ ! -e "$dest/$t" ] && [ ! -L "$dest/$t" ]; do
                case $t in */?*) t=${t#*/} ;; *) break ;; esac
            done
            if [ -e "$dest/$t" ] || [ -L "$dest/$t" ]; then line=$t; fi
        fi
    else
        case $line in /*) return 1 ;; esac
    fi
    case /$line/ in */../*|*/./*|//) return 1 ;; esac
    printf '%s' "$line"
}

# The entries of manifest $1 as relative paths, one a line; exits 1 naming a
# line that is not under DEST ($2).
read_manifest() {
    fmt=old
    [ "$(head -n 1 "$1")" = "$HEADER" ] && fmt=2
    # DEST's spellings an older line may start with, squeezed, once for all lines
    spelt_as=$(squeeze "$2/") spelt_here='' spelt_real=''
    case $2 in /*) ;; *) spelt_here=$(squeeze "$(pwd)/$2/") ;; esac
    real=$(cd "$2" 2>/dev/null && pwd -P) && spelt_real=$(squeeze "$real/")
    while IFS= read -r f; do
        case $f in ''|'#'*) continue ;; esac
        r=$(relpath "$f" "$2" "$fmt") || {
            echo "$cmd: $1 names $f, outside $2: refused" >&2
            return 1
        }
        printf '%s\n' "$r"
    done < "$1"
}

cmd=${1:-}
case $cmd in
install)
    [ $# -eq 3 ] || { echo "usage: $0 install BIN DEST" >&2; exit 2; }
    bin=$2
    dest=$(trim "$3")
    share=$dest/share/pipesim
    [ -x "$bin" ] || { echo "install: $bin: not an executable" >&2; exit 1; }
    old=
    if [ -f "$share/MANIFEST" ]; then
        old=$(read_manifest "$share/MANIFEST" "$dest") || exit 1
    fi
    manifest=$dest/.pipesim-MANIFEST.$$
    # the folders made here (those an earlier install made stay listed)
    mkdirs() { # DIR relative to DEST, parents first
        p=
        rest=$1
        while [ -n "$rest" ]; do
            part=${rest%%/*}
            [ "$part" = "$rest" ] && rest= || rest=${rest#*/}
            p=${p:+$p/}$part
            if [ ! -d "$dest/$p" ]; then
                install -d "$dest/$p"
                echo "$p/" >> "$manifest"
            elif printf '%s\n' "$old" | grep -Fxq -- "$p/"; then
                grep -Fxq -- "$p/" "$manifest" || echo "$p/" >> "$manifest"
            fi
        done
    }
    made_dest=
    if [ ! -d "$dest" ]; then
        made_dest=1
    elif printf '%s\n' "$old" | grep -Fxq ./; then
        made_dest=1
    fi
    install -d "$dest"
    echo "$HEADER" > "$manifest"
    trap 'rm -f "$manifest"' EXIT
    [ -z "$made_dest" ] || echo ./ >> "$manifest"
    put() { # SRC DST(relative to DEST) MODE
        mkdirs "$(dirname "$2")"
        install -m "$3" "$1" "$dest/$2"
        echo "$2" >> "$manifest"
    }
    put "$bin" bin/pipesim 755
    for pair in models/topologies:topologies models/profiles:profiles \
                studies/gpipe:gpipe studies/torchgpipe:torchgpipe; do
        src=${pair%%:*} dst=share/pipesim/${pair#*:}
        find "$src" -type f | LC_ALL=C sort | while IFS= read -r f; do
            put "$f" "$dst/${f#"$src"/}" 644
        done
    done
    put docs/pipesim.1 share/man/man1/pipesim.1 644
    put scripts/pipesim-completion.bash share/bash-completion/completions/pipesim 644
    # what the earlier install wrote and this one did not
    stale=0
    if [ -n "$old" ]; then
        stale=$(printf '%s\n' "$old" | grep -v '/$' | while IFS= read -r f; do
            if ! grep -Fxq -- "$f" "$manifest" && [ -e "$dest/$f" ]; then
                rm -f "$dest/$f" && echo x
            fi
        done | wc -l)
        # then their folders, deepest first, where empty
        find "$share" -depth -mindepth 1 -type d -exec rmdir {} \; 2>/dev/null || true
    fi
    mv "$manifest" "$share/MANIFEST"
    trap - EXIT
    n=$(grep -v '^#' "$share/MANIFEST" | grep -vc '/$' || true)
    gone=
    [ "$stale" -eq 0 ] || gone="; $stale left from the earlier install removed"
    echo "installed pipesim in $dest ($n files, listed in $share/MANIFEST$gone)"
    ;;
uninstall)
    [ $# -eq 2 ] || { echo "usage: $0 uninstall DEST" >&2; exit 2; }
    dest=$(trim "$2")
    share=$dest/share/pipesim
    if [ ! -f "$share/MANIFEST" ]; then
        echo "uninstall: no $share/MANIFEST: pipesim is not installed in $dest" >&2
        exit 1
    fi
    list=$(read_manifest "$share/MANIFEST" "$dest") || exit 1
    n=0 gone=0
    while IFS= read -r f; do
        case $f in ''|*/) continue ;; esac
        if [ -e "$dest/$f" ] || [ -L "$dest/$f" ]; then
            rm -f "$dest/$f"
            n=$((n + 1))
        else
            gone=$((gone + 1))
        fi
    done <<EOF
$list
EOF
    rm -f "$share/MANIFEST"
    # the folders install made under share/pipesim, deepest first, if empty
    find "$share" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    if [ -e "$share" ]; then
        echo "uninstall: $share still holds files install did not write; left in place" >&2
    fi
    # the folders install created outside it (listed), deepest first, if empty
    printf '%s\n' "$list" | grep '/$' | grep -vx ./ | LC_ALL=C sort -r |
        while IFS= read -r d; do
            rmdir "$dest/$d" 2>/dev/null || true
        done
    if printf '%s\n' "$list" | grep -Fxq ./; then
        rmdir "$dest" 2>/dev/null || true
    fi
    if [ "$gone" -gt 0 ]; then
        echo "removed pipesim from $dest ($n files; $gone listed were gone already)"
    else
        echo "removed pipesim from $dest ($n files)"
    fi
    ;;
*)
    echo "usage: $0 install BIN DEST | uninstall DEST" >&2
    exit 2
    ;;
esac
