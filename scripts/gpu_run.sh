#!/bin/bash
# On a GPU machine, from the repository root with .gpu/ (scripts/gpu_bundle.sh) beside it: the CUDA
# executor's check, then optimize (cuda, and v100 for comparison) and bench --target cuda per
# benchmark model and per PyTorch export. Results land in $OUT (the device tool's folder).
# STEPS="check models torch", MODELS, TORCH, BUDGET (seconds before the loops stop), NO_V100=1.
set -u
G=$PWD/.gpu
STEPS=${STEPS:-check models}
MODELS=${MODELS:-squeezenet resnet50 bert nasrnn sru resnext50 inception_v3 nasnet_a}
BUDGET=${BUDGET:-400}
TORCH=${TORCH:-resnet50 squeezenet1_1 resnext_branches inception_v3 resnext50_32x4d mobilenet_v2 transformer_encoder efficientnet_b0}
deadline=$((SECONDS + BUDGET))
NV=$(python3 -c "
import site, glob, os
d = []
for sp in site.getsitepackages():
    d += sorted(glob.glob(os.path.join(sp, 'nvidia', '*', 'lib')))
print(':'.join(d))")
export LD_LIBRARY_PATH=$G/lib:$NV
mkdir -p /tmp/gs/r /tmp/gs/m && tar xzf $G/data.tgz -C /tmp/gs
export GRAPHSUB_SOURCE_DIR=$PWD GRAPHSUB_TESTDATA_DIR=/tmp/gs/data/libonnx GRAPHSUB_NODE_TESTS_DIR=/tmp/gs/data/current
B=$G/bin/graphsub
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
ldd $B | grep -E "not found|cudnn|cublas|cudart"
left() { [ $SECONDS -lt $deadline ] || { echo "SKIP $1: out of time"; return 1; }; }
if [[ " $STEPS " == *" check "* ]]; then
  GRAPHSUB_CUDA_CHECK_JSON=$OUT/gpu_check.json timeout -k 5 150 $G/bin/runtime_cuda_gpu_executor_check \
    > $OUT/gpu_check.txt 2>&1
  echo "check rc=$? after ${SECONDS}s"
  grep -E "FAILED|failed|passed|SKIPPED" $OUT/gpu_check.txt | tail -5
  sed -n '/ONNX node tests by operator/,$p' $OUT/gpu_check.txt
fi
if [[ " $STEPS " == *" models "* ]]; then
  $B models --write /tmp/gs/m $MODELS > /dev/null
  for m in $MODELS; do
    left "$m" || break
    echo "=== $m (${SECONDS}s)"
    timeout -k 5 60 $B -v optimize --target cuda /tmp/gs/m/$m.onnx -o /tmp/gs/m/$m.cuda.onnx --cost-cache $OUT/h200.json \
      --report /tmp/gs/r/$m.cuda.json --time-limit 20 2>&1 | grep -v "^\[.*debug" | tail -12
    [ -n "${NO_V100:-}" ] || timeout -k 5 30 $B -q optimize --target v100 /tmp/gs/m/$m.onnx -o /tmp/gs/m/$m.v100.onnx --report /tmp/gs/r/$m.v100.json \
      --time-limit 20 | tail -2
    for v in cuda v100; do
      [ -f /tmp/gs/m/$m.$v.onnx ] || continue
      left "bench $m $v" || break
      timeout -k 5 40 $B bench --target cuda /tmp/gs/m/$m.onnx /tmp/gs/m/$m.$v.onnx --warmup 5 --runs 20 --max-seconds 4 \
        --json /tmp/gs/r/bench_$m.$v.json 2>&1 | tail -6
    done
  done
fi
if [[ " $STEPS " == *" torch "* ]]; then
  mkdir -p /tmp/gs/t
  timeout -k 5 150 python3 scripts/torch_models.py --folder /tmp/gs/t --models $TORCH 2>&1 | grep -v Warning | tail -12
  echo "exported after ${SECONDS}s"
  for m in $TORCH; do
    f=/tmp/gs/t/${m}_opset17.onnx
    case $m in
      transformer_encoder) D="--dim batch=2 --dim sequence=16";;
      bert_base) D="--dim batch=1 --dim sequence=32";;
      *) D="";;
    esac
    [ -f $f ] || continue
    left "$m" || break
    echo "=== $m (${SECONDS}s)"
    timeout -k 5 60 $B optimize --target cuda $f -o /tmp/gs/t/$m.cuda.onnx --cost-cache $OUT/h200.json \
      --report /tmp/gs/r/torch_$m.cuda.json --time-limit 20 $D 2>&1 | tail -3
    [ -f /tmp/gs/t/$m.cuda.onnx ] || continue
    left "bench $m" || break
    timeout -k 5 40 $B bench --target cuda $f /tmp/gs/t/$m.cuda.onnx --warmup 5 --runs 20 --max-seconds 4 \
      --json /tmp/gs/r/bench_torch_$m.json $D 2>&1 | tail -6
  done
fi
tar czf $OUT/results.tar.gz -C /tmp/gs r
echo "done after ${SECONDS}s"
