#!/bin/sh
# Usage: embed.sh OUT.cc TREE STRIP FILE... — writes FILEs as C++ string
# literals, registered under TREE, each named by its path less the prefix STRIP.
set -eu
out=$1; tree=$2; strip=$3; shift 3
{
    echo '#include "loader/embedded_files.h"'
    echo 'namespace pfsim {'
    echo 'namespace {'
    echo 'const EmbeddedFile files[] = {'
    for f in "$@"; do
        if grep -q ')pfsim_file"' "$f"; then echo "embed.sh: $f contains the literal's delimiter" >&2; exit 1; fi
        printf '    {"%s", R"pfsim_file(' "${f#"$strip"}"
        cat "$f"
        echo ')pfsim_file"},'
    done
    echo '};'
    echo "const RegisterEmbeddedFiles registered(\"$tree\", files, sizeof files / sizeof files[0]);"
    echo '}  // namespace'
    echo '}  // namespace pfsim'
} > "$out"
