"""usage: user-test-agrees.py <report.json> <original file> <file>
Says whether what `optimize -i --test` left in <file> is what its report
says the user's test decided (user-test.test): a rewrite that passed is
written (the file differs from the original), one that failed is not (the
file is the original, byte for byte)."""
import json
import sys

report = json.load(open(sys.argv[1]))
tests = [k["user_test"] for k in report["kernels"] if "user_test" in k]
if not tests:
    sys.exit("no kernel has a user_test record: the test never ran")
original = open(sys.argv[2], "rb").read()
now = open(sys.argv[3], "rb").read()
test = tests[0]
if test["passed"] and test["kept"] and now != original:
    print("agree: passed and written")
elif not test["passed"] and not test["kept"] and now == original:
    print("agree: failed and restored")
else:
    print(f"DISAGREE: passed={test['passed']} kept={test['kept']} "
          f"file {'unchanged' if now == original else 'changed'}")
