# bash completion for pipesim (installed as share/bash-completion/completions/pipesim).
# Commands come from `pipesim --help`, each command's options from its own
# `--help`, preset names from `pipesim presets --format csv`, schedules from
# `pipesim help schedules`: nothing here goes stale when a command, an option or a
# schedule is added.

_pipesim_presets()
{
    # $1: "topology" or "profile": the names of that section of the CSV
    # (section and name come first and hold no comma; the name is quoted)
    "$2" presets --format csv 2>/dev/null | awk -F, -v want="$1" '
        NR > 1 && $1 == want { gsub(/"/, "", $2); print $2 }'
}

_pipesim_schedules()
{
    # the registry's names, "interleaved:v" as "interleaved:", "zb-auto[:L]" as "zb-auto"
    "$1" help schedules 2>/dev/null | sed -e 's/\[.*//' -e 's/:.*/:/'
}

_pipesim_usage()
{
    # the usage block of a command's --help (its first paragraph), only the forms
    # of subcommand $3 where one is given ("gen chain"): the prose below it names
    # other commands' options too
    # shellcheck disable=SC2086
    "$1" $2 --help 2>/dev/null | awk -v form="$3" '
        $0 == "" { exit }
        /pipesim / { keep = form == "" || index($0, "pipesim " form " ") > 0 }
        keep'
}

_pipesim_values()
{
    # the values a command's usage lists for an option, in every form of the command
    # ("[--objective throughput|memory]", "[--kind speedup,bubble,...]", and a form's
    # own "pipesim plot --kind schedules"); placeholders (capitals, one letter: "m",
    # "a,b,...") and numbers left out ("--partition 3,5" is an example), but for
    # --tables, whose values are numbers; a name's own suffix ("lingvo[,...]",
    # "zb-auto[:L]") taken off
    local keep='^[a-z][a-z0-9_-]+$'
    [ "$3" = --tables ] && keep='^([a-z][a-z0-9_-]+|[0-9]+)$'
    _pipesim_usage "$1" "$2" "$4" | tr '\n' ' ' |
        grep -oE -- "\[$3 ([^]\[]|\[[^]]*\])*\]|(^| )$3 [a-z][a-z0-9_-]*" |
        sed -e 's/^ //' -e 's/^\[//' -e "s/^$3 //" -e 's/\]$//' | tr '|, ' '\n\n\n' |
        sed -e 's/\[.*//' | grep -E "$keep" | awk '!seen[$0]++'
}

_pipesim()
{
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion || return
    else
        cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
    fi
    local prog=${words[0]}
    if [ "$cword" -eq 1 ]; then
        local cmds
        cmds=$("$prog" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
        COMPREPLY=($(compgen -W "$cmds --help --version -V" -- "$cur"))
        return
    fi
    local cmd=${words[1]} sub=""
    case $cmd in
    validate)
        # validate --check is a command of its own: its options and its help
        local w
        for w in "${words[@]:2}"; do
            [ "$w" = --check ] && cmd="validate --check"
        done;;
    reproduce)
        if [ "$cword" -eq 2 ]; then
            COMPREPLY=($(compgen -W "gpipe torchgpipe --help" -- "$cur"))
            return
        fi
        cmd="reproduce ${words[2]}";;
    help)
        COMPREPLY=($(compgen -W "errors schedules $("$prog" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')" -- "$cur"))
        return;;
    gen)
        if [ "$cword" -eq 2 ]; then
            COMPREPLY=($(compgen -W "model chain --help" -- "$cur"))
            return
        fi
        # the spec, wherever it goes (gen model -o x.csv gpt:...), until one is given
        local given="" w
        for w in "${words[@]:3:cword-3}"; do
            [[ $w == *:* ]] && given=1
        done
        if [ "${words[2]}" = model ] && [ "$cword" -ge 3 ] && [[ $cur != -* ]] &&
           [[ $prev != -o && $prev != --out ]] && [ -z "$given" ]; then
            local gens="mlp: transformer: amoebanet: gpt: resnet: unet: vgg:"
            COMPREPLY=($(compgen -W "$gens" -- "$cur"))
            compopt -o nospace 2>/dev/null
            return 0
        fi
        sub="gen ${words[2]}";;
    esac
    case $prev in
    --topology)
        COMPREPLY=($(compgen -W "$(_pipesim_presets topology "$prog")" -- "$cur")
                   $(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
        return;;
    --model)
        COMPREPLY=($(compgen -W "$(_pipesim_presets profile "$prog") mlp: transformer: amoebanet: gpt: resnet: unet: vgg:" -- "$cur")
                   $(compgen -f -X '!*.csv' -- "$cur") $(compgen -d -- "$cur"))
        compopt -o nospace 2>/dev/null
        return;;
    --net)
        # the runtime's nets: an MLP, or a file (validate --help)
        COMPREPLY=($(compgen -W "mlp: file:" -- "$cur"))
        compopt -o nospace 2>/dev/null
        return;;
    --schedule|--schedules)
        # one name, or a comma list (sweep --schedule, --schedules): its last name
        local head=${cur%"${cur##*,}"}
        COMPREPLY=($(compgen -P "$head" -W "$(_pipesim_schedules "$prog")" -- "${cur##*,}"))
        if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *: ]]; then
            compopt -o nospace 2>/dev/null
        fi
        return 0;;
    --remat)
        # one mode; validate --check takes a comma list or all
        local head=${cur%"${cur##*,}"} modes="always except_last never"
        [ "$cmd" = "validate --check" ] && modes="$modes all"
        COMPREPLY=($(compgen -P "$head" -W "$modes" -- "${cur##*,}"))
        return;;
    --format)
        COMPREPLY=($(compgen -W "table csv json" -- "$cur"))
        return;;
    --out-dir|--topologies|--data)
        COMPREPLY=($(compgen -d -- "$cur"))
        return;;
    --trace|--trace-csv|--out|-o|--db|--report|--emit-profile)
        COMPREPLY=($(compgen -f -- "$cur"))
        return;;
    esac
    if [[ $prev == --* ]]; then
        # an option whose values the usage lists (--partition, --kind, --objective,
        # --mem-cap, ...): one of them, or the last of a comma list
        local vals
        vals=$(_pipesim_values "$prog" "$cmd" "$prev" "$sub")
        if [ -n "$vals" ]; then
            local head=${cur%"${cur##*,}"}
            COMPREPLY=($(compgen -P "$head" -W "$vals" -- "${cur##*,}"))
            return
        fi
    fi
    if [[ $cur == -* ]]; then
        local opts
        # the options of the usage block alone, long and short (-K, -o), each
        # after a blank, '[' or '|' ("dualpipe-v" holds none)
        opts=$(_pipesim_usage "$prog" "$cmd" "$sub" |
               grep -oE -- '(^|[][ |])(--[a-z][a-zA-Z0-9-]*|-[A-Za-z])' |
               sed -e 's/^[][ |]//' | sort -u)
        # validate's usage leaves out --check, a command of its own (helper-133)
        [ "$cmd" = validate ] && opts="$opts --check"
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}

complete -F _pipesim pipesim
