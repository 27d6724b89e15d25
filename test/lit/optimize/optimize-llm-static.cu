// LLM mode against a real HTTP server on loopback speaking the OpenAI
// protocol (test/llm/fake_openai_server.py plays a script), in --static mode
// (no GPU): a 429 is retried, the planner's JSON experiments are followed,
// the coder's code is extracted, spliced in and compiled, a reply that
// changes the signature fails the contract check, a reply without code is
// rejected; tokens and transcripts land in the report, the key in neither;
// a second run with the same inputs is answered from the reply cache (no
// more requests); a rejected key is an error, not a quiet fallback.
// RUN: rm -rf %t && mkdir -p %t && cp %S/optimize-static.cu %t/scale.cu && cp %S/Inputs/scale.cu.astra.json %t/
// RUN: env OPENAI_API_KEY=sk-test ASTRA_CACHE_DIR=%t/cache %python %S/../../llm/with_fake_server.py %S/Inputs/llm-script.json --stats %t/stats.json -- \
// RUN:   sh -c "%clang-astra optimize --static --agents=llm --llm-model fake --llm-base-url http://127.0.0.1:{port}/v1 --report %t/rep %t/scale.cu 2> %t/run1.txt && %clang-astra optimize --static --agents=llm --llm-model fake --llm-base-url http://127.0.0.1:{port}/v1 %t/scale.cu 2> %t/run2.txt"
// RUN: FileCheck %s < %t/run1.txt
// CHECK: scale.cu: scale: unchanged: static mode does not run kernels
// CHECK-NEXT: static: llm: restrict and unroll by 4: compiles (not run: static mode)
// CHECK-NEXT: static: restrict-const: compiles (not run: static mode)
// The host call that now passes too few arguments is host code no kernel
// reaches, so the compile goes on (docs/nvcc-compat.md) and the contract
// check names what broke.
// CHECK-NEXT: static: llm: add a stride parameter: contract broken: the kernel's signature changed: it had 4 parameters, now 5
// CHECK: static: llm: anything: no code: the reply has no code block
// The second run saw the same replies, from the cache.
// RUN: FileCheck %s < %t/run2.txt
// RUN: %python -c "import json,sys; n=json.load(open(sys.argv[1]))['requests']; print('requests', n)" %t/stats.json | FileCheck %s --check-prefix=STATS
// STATS: requests 5
// RUN: FileCheck %s --check-prefix=REPORT < %t/rep/report.md
// REPORT: LLM tokens: 320 prompt, 170 completion.
// RUN: ls %t/rep/transcripts | FileCheck %s --check-prefix=TRANSCRIPTS
// TRANSCRIPTS: coder-0001-rewrite-1.json
// RUN: not grep -r sk-test %t/rep %t/cache
// A rejected key: the kernel is not optimized, the message says why, exit 1.
// RUN: not env OPENAI_API_KEY=sk-wrong ASTRA_CACHE_DIR=%t/cache2 %python %S/../../llm/with_fake_server.py %S/Inputs/llm-401.json -- \
// RUN:   %clang-astra optimize --static --agents=llm --llm-model fake --llm-base-url http://127.0.0.1:{port}/v1 %t/scale.cu 2> %t/run3.txt
// RUN: FileCheck %s --check-prefix=KEY < %t/run3.txt
// KEY: scale.cu: scale: not optimized: LLM mode: the API key was rejected (HTTP 401 from http://127.0.0.1:{{[0-9]+}}/v1/chat/completions)
// KEY-SAME: check ASTRA_LLM_API_KEY / OPENAI_API_KEY
// RUN: not grep sk-wrong %t/run3.txt
