// Reads the conformance suite's output folder (one sub-folder per scenario
// run, each with checks.json) and prints one line per check:
//   SCENARIO CHECK_ID#N STATUS
// N counts repeats of one check id within a scenario, so every line is a
// stable key. With --errors, only the checks that did not pass, each
// followed by the suite's message: SCENARIO CHECK_ID#N STATUS: MESSAGE.
// Usage: node conformance-results.mjs OUTPUT_DIR [--errors]
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
const errors = process.argv[3] === "--errors";
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
    if (!errors) {
      lines.push(`${scenario} ${id}#${n} ${c.status}`);
    } else if (c.status !== "SUCCESS") {
      const msg = String(c.errorMessage || "").replace(/\s+/g, " ").slice(0, 400);
      lines.push(`${scenario} ${id}#${n} ${c.status}: ${msg}`);
    }
  }
}
process.stdout.write(lines.sort().join("\n") + (lines.length ? "\n" : ""));
