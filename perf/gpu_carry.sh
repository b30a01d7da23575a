#!/usr/bin/env bash
# Prepares the folder .gpu/ that perf/gpu_all.sh needs on the lent GPU machine, which has no shared/ folder, no
# Django and other versions of transformers/sentence-transformers (its python3 holds torch with CUDA):
#   .gpu/site.tar.xz         Similia's pure-Python packages the image lacks, as wheels for CPython 3.12 installed
#                            into one folder (Django's translations other than English and simplemma's languages
#                            other than la/el/en left out, to stay under the 64 MiB the tree may carry)
#   .gpu/corpus.tar.xz       data/corpus (the Loci Similes search corpus; build it first, e.g. by `make run`)
#   .gpu/shared/data/...     the Latin Library archive and the Loci Similes gold pairs
# Then, with the device tool (carry [".gpu"]):
#   mkdir -p /tmp/site && tar -xJf .gpu/site.tar.xz -C /tmp/site && tar -xJf .gpu/corpus.tar.xz -C data &&
#   PYTHONPATH=/tmp/site PYTHON=python3 SIMILIA_SHARED_DATA_DIR=$PWD/.gpu/shared/data OUT=/tmp/o perf/gpu_all.sh
# (the tool brings back at most 8 files: tar $OUT's logs into one). .gpu/ must be in .git/info/exclude.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
SHARED=${SIMILIA_SHARED_DATA_DIR:-$(cd .. && pwd)/shared/data}
WHL=$(mktemp -d); SITE=$(mktemp -d)
pins() { grep -iE "^($(echo "$@" | tr ' ' '|'))==" requirements.txt; }
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$WHL" \
  $(pins django djangorestframework drf-spectacular drf-spectacular-sidecar django-environ django-filter whitenoise \
        celery kombu simplemma transformers sentence-transformers tokenizers) \
  amqp billiard vine asgiref sqlparse tzlocal tzdata click-didyoumean click-repl click-plugins prompt-toolkit \
  wcwidth inflection uritemplate
"$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$WHL"/*.whl
find "$SITE/django" -type d -name LC_MESSAGES | while read -r d; do
  [ "$(basename "$(dirname "$d")")" = en ] || rm -rf "$(dirname "$d")"; done
find "$SITE/simplemma/strategies/dictionaries/data" -name '*.plzma' ! -name 'la.*' ! -name 'el.*' ! -name 'en.*' -delete
rm -rf "$SITE/bin"
mkdir -p .gpu/shared/data/latin_library .gpu/shared/data/locisimiles
tar -cJf .gpu/site.tar.xz -C "$SITE" .
tar -cJf .gpu/corpus.tar.xz -C data corpus
cp "$SHARED/latin_library/latin_library.tar.xz" .gpu/shared/data/latin_library/
cp "$SHARED"/locisimiles/*.csv .gpu/shared/data/locisimiles/
rm -rf "$WHL" "$SITE"
du -sh .gpu
