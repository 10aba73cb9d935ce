// Reads the conformance suite's output folder (one sub-folder per scenario
// run, each with checks.json) and prints one line per check:
//   SCENARIO CHECK_ID#N STATUS
// N counts repeats of one check id within a scenario, so every line is a
// stable key. Usage: node conformance-results.mjs OUTPUT_DIR
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
const lines = [];
for (const sub of readdirSync(dir).sort()) {
  const f = join(dir, sub, "checks.json");
  if (!existsSync(f)) continue;
  // server-<scenario>-<ISO timestamp>
  const m = sub.match(/^server-(.*)-\d{4}-\d\d-\d\dT[\d-]+Z$/);
  const scenario = m ? m[1] : sub;
  const seen = new Map();
  for (const c of JSON.parse(readFileSync(f, "utf8"))) {
    const id = c.id || c.name;
    const n = (seen.get(id) || 0) + 1;
    seen.set(id, n);
    lines.push(`${scenario} ${id}#${n} ${c.status}`);
  }
}
process.stdout.write(lines.sort().join("\n") + (lines.length ? "\n" : ""));
