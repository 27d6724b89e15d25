#!/bin/bash
# Session 12, call 3: (1) why every delinearized conv1d loses 3-7% on the
# 5.5 us "small" set: `profile --shape small` (50 runs) of block shapes of
# the 3-D grid alone, of coarsened variants with more, smaller blocks, of
# the 3-D grid with its flat branch cut (conv1d/grid3-noflat), of call 1's
# hand variants, and of the original against itself (the noise floor);
# the coarsened variants also on kb and large; (2) every GPU test.
set -u
R=$(pwd)
mkdir -p /tmp/astra-bundle && tar -xJf dist/clang-astra-*.tar.xz -C /tmp/astra-bundle || exit 1
A=$(ls -d /tmp/astra-bundle/clang-astra-*)
export ASTRA_TOOLS_DIR=$A/bin PATH=$A/bin:$PATH ASTRA_CACHE_DIR=/tmp/astra-cache PYTHONUNBUFFERED=1
L=$OUT/logs && mkdir -p $L
clang-astra --version > $L/version.txt 2>&1
T0=$(date +%s)
V=$R/docs/results/2026-11-23-h100-session12/conv1d
cd $A/kernels/kernelbench
W=/tmp/v && mkdir -p $W
mk() { # name pipeline opts...
  local n=$1 p=$2; shift 2
  mkdir -p $W/$n && cp conv1d.cu conv1d.cu.astra.json $W/$n/
  clang-astra rewrite --passes=$p "$@" -i $W/$n/conv1d.cu >> $L/rewrite.log 2>&1
  echo "== $n rc=$?" >> $L/rewrite.log
}
D=restrict-const,delinearize
TC=restrict-const,delinearize,thread-coarsen,index32,launch-bounds
mk g128x8 $D
mk g256x1 $D --pass-opt=delinearize.x=256 --pass-opt=delinearize.y=1
mk g32x8 $D --pass-opt=delinearize.x=32 --pass-opt=delinearize.y=8
mk g64x4 $D --pass-opt=delinearize.x=64 --pass-opt=delinearize.y=4
mk y4x1-64x4 $TC --pass-opt=delinearize.x=64 --pass-opt=delinearize.y=4 --pass-opt=thread-coarsen.y=4
mk y2x2-64x2 $TC --pass-opt=delinearize.x=64 --pass-opt=delinearize.y=2 --pass-opt=thread-coarsen.y=2 --pass-opt=thread-coarsen.x=2
mk y4x4-128x4 $TC --pass-opt=delinearize.x=128 --pass-opt=delinearize.y=4 --pass-opt=thread-coarsen.y=4 --pass-opt=thread-coarsen.x=4
mk y4x2-64x4 $TC --pass-opt=delinearize.x=64 --pass-opt=delinearize.y=4 --pass-opt=thread-coarsen.y=4 --pass-opt=thread-coarsen.x=2
prof() { # label candidate shapes
  echo "== $1 $3" >> $L/profiles.txt
  local T1=$(date +%s)
  timeout 90 clang-astra profile conv1d.cu --candidate $2 --shape $3 --runs 50 >> $L/profiles.txt 2>&1
  echo "   rc=$? $(( $(date +%s)-T1 )) s" >> $L/profiles.txt
}
prof self conv1d.cu small
for v in g128x8 g256x1 g32x8 g64x4; do prof $v $W/$v/conv1d.cu small; done
prof grid3-noflat $V/grid3-noflat/conv1d.cu small
for v in grid3d o4 o8l4; do prof hand-$v $V/$v/conv1d.cu small; done
for v in y4x1-64x4 y2x2-64x2 y4x4-128x4 y4x2-64x4; do prof $v $W/$v/conv1d.cu small,kb,large; done
echo "profiles $(( $(date +%s)-T0 )) s" >> $L/profiles.txt
cp -r $W $OUT/variants
T1=$(date +%s)
(cd $A/test/gpu && timeout $(( 575 - (T1 - T0) )) env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 4 . > $L/gpu-tests.log 2>&1)
echo "tests rc=$? $(( $(date +%s)-T1 )) s" >> $L/gpu-tests.log
tar -cJf $OUT/variants.tar.xz -C $OUT variants && rm -rf $OUT/variants
