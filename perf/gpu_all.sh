#!/usr/bin/env bash
# Every GPU check of issue 28 in one call of at most 10 minutes, figures written to $OUT:
#
#   OUT=/tmp/gpu_out perf/gpu_all.sh                 # on a CUDA machine (about 11 minutes of step limits: run STEPS in two calls of at most 10 minutes)
#   OUT=/tmp/gpu_out perf/gpu_all.sh --cpu-smoke     # the same steps at tiny sizes on a CPU (does it all run?)
#   STEPS="worker throughput" perf/gpu_all.sh ...    # only the steps named
#
# Steps (each under its own `timeout`, its output in $OUT/<step>.log, its exit status and seconds in
# $OUT/steps.tsv; a step that fails does not stop the next):
#   device      nvidia-smi: the device named
#   gpu_check   perf/gpu_check.py (encode, exact top-1000, hybrid fusion)
#   rerank      perf/gpu_check_rerank.py (a cross-encoder built here, one fold, rerank pairs/s)
#   pretrain    manage.py pretrain_encoder: small Latin encoder on the Latin Library, mixed precision
#   finetune    perf/gpu_check_rerank.py --model <that encoder>: 3-class cross-encoder fine-tuned from it
#   oom         perf/gpu_all_steps.py oom: a base step in 2 % of the GPU's memory, micro-batch halved until it fits
#   worker      a Celery worker on the gpu queue picks up a pretrain_encoder job (sqlite, filesystem broker)
#   throughput  perf/gpu_all_steps.py throughput: base-size cross-encoder at 128 tokens, pairs/s (goal 5,000)
# and the small model's folder as $OUT/gpu-la-small.tar.gz when it is under 60 MB.
#
# The corpus: latin_library.tar.xz from var/corpora/ (carry it there: the device machine has no shared/ folder)
# or from the shared data folder ($SIMILIA_SHARED_DATA_DIR or ../shared/data). Python: $PYTHON or .venv/bin/python.
set -u
cd "$(dirname "$0")/.."
SMOKE=0
[ "${1:-}" = "--cpu-smoke" ] && SMOKE=1
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
PY=${PYTHON:-.venv/bin/python}
WORK=$(mktemp -d)
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=true
export SIMILIA_MODELS_DIR=$WORK/models SIMILIA_CORPORA_DIR=$WORK/corpora SIMILIA_VAR_DIR=$WORK/var
export DJANGO_SETTINGS_MODULE=config.settings.test DATABASE_URL=sqlite:///$WORK/db.sqlite3
export CELERY_BROKER_URL=filesystem:// CELERY_TASK_ALWAYS_EAGER=false
mkdir -p "$SIMILIA_MODELS_DIR" "$SIMILIA_CORPORA_DIR" "$SIMILIA_VAR_DIR"
SHARED=${SIMILIA_SHARED_DATA_DIR:-$(cd .. && pwd)/shared/data}
for f in var/corpora/latin_library.tar.xz "$SHARED/latin_library/latin_library.tar.xz" \
         /work/shared/data/latin_library/latin_library.tar.xz; do
  if [ -f "$f" ]; then ln -sf "$(readlink -f "$f")" "$SIMILIA_CORPORA_DIR/latin_library.tar.xz"; break; fi
done
CORPUS=latin_library.tar.xz
printf 'step\texit\tseconds\n' > "$OUT/steps.tsv"

step() {  # step NAME LIMIT_SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  case " ${STEPS:-$name} " in *" $name "*) ;; *) return 0;; esac  # STEPS="worker throughput": only those
  local t0; t0=$(date +%s.%N)
  echo "== $name (limit ${limit} s)"
  timeout --kill-after=5 "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(awk "BEGIN {printf \"%.1f\", $(date +%s.%N) - $t0}")" >> "$OUT/steps.tsv"
  tail -n 4 "$OUT/$name.log"
}

if [ $SMOKE = 1 ]; then
  SIZE=tiny; PRE=(--size tiny --max-lines 2000 --steps 20 --checkpoint-every 10); SMOKE_FLAG=(--cpu-smoke)
  THROUGHPUT=(--size tiny --pairs 256 --batch-size 64); WORKER_LIMIT=180
else
  SIZE=small; PRE=(--size small --stride 2 --steps 1500 --batch-size 128 --checkpoint-every 500); SMOKE_FLAG=()
  THROUGHPUT=(--size base --pairs 40000 --batch-size 512); WORKER_LIMIT=60
fi

step device 10 bash -c 'nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || echo "no CUDA device"'
step gpu_check 50 "$PY" perf/gpu_check.py "${SMOKE_FLAG[@]}"
step rerank 90 "$PY" perf/gpu_check_rerank.py "${SMOKE_FLAG[@]}"
step pretrain 170 "$PY" manage.py pretrain_encoder --corpus "$CORPUS" --name gpu-la-$SIZE "${PRE[@]}"
step finetune 90 "$PY" perf/gpu_check_rerank.py "${SMOKE_FLAG[@]}" --model gpu-la-$SIZE
if [ $SMOKE = 0 ]; then
  step oom 150 "$PY" perf/gpu_all_steps.py oom --corpus "$CORPUS"
fi

step worker "$WORKER_LIMIT" "$PY" perf/gpu_all_steps.py worker --corpus "$CORPUS" --timeout $((WORKER_LIMIT - 15))
step throughput 60 "$PY" perf/gpu_all_steps.py throughput --tokenizer gpu-la-$SIZE "${THROUGHPUT[@]}"

if [ -d "$SIMILIA_MODELS_DIR/gpu-la-$SIZE" ]; then
  tar -czf "$WORK/model.tar.gz" -C "$SIMILIA_MODELS_DIR" "gpu-la-$SIZE"
  if [ "$(stat -c %s "$WORK/model.tar.gz")" -lt 60000000 ]; then cp "$WORK/model.tar.gz" "$OUT/gpu-la-$SIZE.tar.gz"; fi
  cp "$SIMILIA_MODELS_DIR/gpu-la-$SIZE/similia.json" "$OUT/gpu-la-$SIZE.card.json"
fi
echo "== steps"; cat "$OUT/steps.tsv"
rm -rf "$WORK"
