#!/bin/sh
# Prints the notes of release $1 (X.Y.Z): its section of CHANGELOG.md, without the heading.
# The release workflow attaches them to the GitHub release; fails when the section is missing
# or empty, so a tag cannot be released without its notes.
set -eu
version=${1:?usage: scripts/release-notes.sh X.Y.Z}
changelog=${2:-CHANGELOG.md}
notes=$(awk -v heading="## [$version]" '
    index($0, heading) == 1 { found = 1; next }
    found && /^## \[/ { exit }
    found && /^\[[^]]*\]: / { exit }
    found { print }
' "$changelog" | sed -e '/./,$!d')
if [ -z "$notes" ]; then
    echo "CHANGELOG.md has no notes for $version: add a \`## [$version]\` section" >&2
    exit 1
fi
printf '%s\n' "$notes"
