#!/bin/sh
# Usage: embed.sh OUT.cc TREE STRIP FILE... — writes FILEs into the binary,
# registered under TREE, each named by its path less the prefix STRIP. A text
# file becomes a raw string literal; a file with NUL bytes (a .npy) an array of
# octal escapes. Each carries its size, so any bytes survive.
set -eu
out=$1; tree=$2; strip=$3; shift 3
{
    echo '#include "loader/embedded_files.h"'
    echo 'namespace pfsim {'
    echo 'namespace {'
    n=0
    for f in "$@"; do
        printf 'const char file%d[] = ' "$n"
        if [ "$(tr -d '\000' < "$f" | wc -c)" -ne "$(wc -c < "$f")" ]; then
            od -An -v -to1 "$f" | sed 's/ \([0-7][0-7][0-7]\)/\\\1/g; s/^/"/; s/$/"/'
        elif grep -q ')pfsim_file"' "$f"; then
            echo "embed.sh: $f contains the literal's delimiter" >&2; exit 1
        else
            printf 'R"pfsim_file('
            cat "$f"
            printf ')pfsim_file"'
        fi
        echo ';'
        n=$((n + 1))
    done
    echo 'const EmbeddedFile files[] = {'
    n=0
    for f in "$@"; do
        printf '    {"%s", file%d, sizeof file%d - 1},\n' "${f#"$strip"}" "$n" "$n"
        n=$((n + 1))
    done
    echo '};'
    echo "const RegisterEmbeddedFiles registered(\"$tree\", files, sizeof files / sizeof files[0]);"
    echo '}  // namespace'
    echo '}  // namespace pfsim'
} > "$out"
