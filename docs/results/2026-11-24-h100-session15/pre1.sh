# Call 1's PRE (run in the bundle): the GPU tests of the code not yet run on
# the GPU (split halves from the unsplit winner, skipped merged checks, the
# planner's second plan without rows-per-block).
cd test/gpu && env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 2 --filter 'optimize/(split-|offline-)' .
