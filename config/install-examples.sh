#!/bin/sh
# Installed by meson: copies the example configurations into $DESTDIR/SYSCONFDIR/armd/examples
# (always) and each one to SYSCONFDIR/armd/NAME.ini only when no such file exists, so that
# `meson install` never overwrites a configured arm.
set -eu
src=$1
dest="${DESTDIR:-}$2"
mkdir -p "$dest/examples"
for f in "$src"/*.ini; do
    name=$(basename "$f")
    cp "$f" "$dest/examples/$name"
    [ -e "$dest/$name" ] || cp "$f" "$dest/$name"
done
