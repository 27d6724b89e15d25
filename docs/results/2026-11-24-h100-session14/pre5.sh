# Call 5's PRE (run in the bundle): the split GPU tests on the scoreboard's build.
cd test/gpu && env PYTHONPATH=$A/lit python3 -c 'import sys; from lit.main import main; sys.argv[0]="lit"; main()' -v -j 2 --filter 'optimize/split-' .
