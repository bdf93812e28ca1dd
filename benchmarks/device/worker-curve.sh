#!/usr/bin/env bash
# The feed's worker curve on a machine of many cores (the `device` machine: 16 cores, no Node.js, no network):
# `vespa-bulk feed --workers N` of DOCS x 1 KB puts against the null endpoint (benchmarks/lib/null-endpoint/), for each
# N in WORKERS, ROUNDS times interleaved, beside h2load with as many threads (the rate a C client gets on as many
# cores). Prints one line per run and a table of medians: ops/s, its ratio to 1 worker (the curve), CPU µs per
# operation, and ours as a ratio to h2load at the same N.
#   worker-curve.sh BUNDLE [DOCS=1000000] [WORKERS="1 2 4 8 12 16"] [ROUNDS=2]
# BUNDLE is a folder made by benchmarks/device/pack.sh: node, null-endpoint, h2load (+ lib/), and one folder per
# build (each an installed vespa-bulk: BUILD/node_modules/.bin/vespa-bulk). Every build there is measured.
set -euo pipefail
bundle=$(cd "$1" && pwd); docs=${2:-1000000}; workers=${3:-"1 2 4 8 12 16"}; rounds=${4:-2}
export PATH="$bundle:$PATH" LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
work=$(mktemp -d); trap 'kill $endpoint 2>/dev/null; rm -rf "$work"' EXIT
builds=$(cd "$bundle" && ls -d build-* | sed 's/build-//')
echo "machine: $(nproc) cores; node $(node --version); builds: $builds; $docs documents; workers: $workers; rounds $rounds" >&2

node -e '
const fs = require("fs"); const f = fs.openSync(process.argv[1], "w"); const n = Number(process.argv[2]);
const body = "x".repeat(1000); let chunk = "";
for (let i = 0; i < n; i++) { chunk += JSON.stringify({ put: `id:ns:music::d${i}`, fields: { title: body } }) + "\n";
  if (chunk.length > 1 << 20) { fs.writeSync(f, chunk); chunk = ""; } }
fs.writeSync(f, chunk);' "$work/puts.jsonl" "$docs"
printf '{"fields":{"title":"%s"}}' "$(head -c 1000 /dev/zero | tr '\0' x)" > "$work/body.json"
for i in $(seq 0 9999); do echo "/document/v1/ns/music/docid/h$i"; done > "$work/uris.txt"

null-endpoint > "$work/endpoint.out" & endpoint=$!
for _ in $(seq 50); do grep -q listening "$work/endpoint.out" 2>/dev/null && break; sleep 0.1; done
url="http://127.0.0.1:$(sed 's/listening //' "$work/endpoint.out")"

# One run: prints "what N ops/s cpu_s limit" (the in-flight limit at the end; - for h2load).
timed() { local what=$1 n=$2; shift 2; local out real user sys
  TIMEFORMAT='%3R %3U %3S'; { out=$( { time "$@" >"$work/out" 2>"$work/err"; } 2>&1 ); } || { echo "FAILED $what $n" >&2; tail -5 "$work/err" >&2; return 0; }
  read -r real user sys <<<"$out"
  local ops limit=-
  if [ "$what" = h2load ]; then ops=$(grep -o 'finished in [^,]*, [0-9.]* req/s' "$work/out" | awk '{print $(NF-1)}')
  else ops=$(grep -o '"feeder.ok.rate": [0-9.]*' "$work/out" | awk '{print $2}')
    limit=$(grep -o '"feeder.inflight.limit": [0-9]*' "$work/out" | awk '{print $2}'); fi
  echo "$what $n ${ops:-0} $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') $limit"; }

results="$work/results"
for round in $(seq "$rounds"); do
  for n in $workers; do
    for b in $builds; do
      timed "$b" "$n" "$bundle/build-$b/node_modules/.bin/vespa-bulk" feed "$work/puts.jsonl" -t "$url" --workers "$n" | tee -a "$results" >&2
    done
    timed h2load "$n" h2load -n "$docs" -t "$n" -c $((4 * n)) -m 256 -d "$work/body.json" -H 'content-type: application/json' -B "$url" -i "$work/uris.txt" | tee -a "$results" >&2
  done
done

node -e '
const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => l.split(" "));
const docs = Number(process.argv[2]); const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const what = [...new Set(rows.map((r) => r[0]))]; const ns = [...new Set(rows.map((r) => Number(r[1])))];
const at = (w, n, i) => med(rows.filter((r) => r[0] === w && Number(r[1]) === n).map((r) => Number(r[i])));
console.log(["workers", ...what.flatMap((w) => [`${w} ops/s`, `${w} x 1 worker`, `${w} CPU us/op`]), ...what.filter((w) => w !== "h2load").map((w) => `${w} / h2load ops/s`)].join(" | "));
for (const n of ns) console.log([n, ...what.flatMap((w) => [Math.round(at(w, n, 2)), (at(w, n, 2) / at(w, ns[0], 2)).toFixed(2), ((at(w, n, 3) * 1e6) / docs).toFixed(1)]),
  ...what.filter((w) => w !== "h2load").map((w) => (at(w, n, 2) / at("h2load", n, 2)).toFixed(2))].join(" | "));
' "$results" "$docs"
