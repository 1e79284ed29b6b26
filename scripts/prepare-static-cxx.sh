#!/bin/sh
# Makes .build/static-cxx/libstdc++.so point at the static libstdc++.a, so that the worker's
# link (Package.swift adds -L .build/static-cxx) takes the C++ runtime from the archive and
# does not load libstdc++.so at start-up: about 0.5 ms and 0.8 MB per push (docs/adr/0001).
set -eu
cd "$(dirname "$0")/.."
archive=$(gcc -print-file-name=libstdc++.a)
if [ ! -f "$archive" ]; then
    echo "prepare-static-cxx: libstdc++.a not found (install g++); the worker will link libstdc++ dynamically" >&2
    exit 0
fi
mkdir -p .build/static-cxx
ln -sfn "$archive" .build/static-cxx/libstdc++.so
