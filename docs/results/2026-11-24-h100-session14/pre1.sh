# Call 1's PRE (run in the bundle): the two split GPU tests, then where a
# verification's time goes on the largest sets (per seed: inputs, baseline,
# candidate), the candidate being the original itself.
cd test/gpu && env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 2 --filter 'optimize/split-' . ; cd $A
for K in kernelbench/gelu:large kernelbench/softmax:mid gnn/sample_neighbors:hop3; do
  F=kernels/${K%%:*}.cu; V0=$(date +%s)
  clang-astra verify $F --candidate $F --shape ${K##*:} --seeds 2 --no-adversarial --verbose 2>&1 | tail -12
  echo "$K: $(( $(date +%s) - V0 )) s"
done
