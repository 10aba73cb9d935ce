// foundry/no-import-cycle: no circle of imports among the app's modules,
// counting type-only imports too. import-x/no-cycle follows the imports
// that run (and resolves as the bundler does), but leaves type-only
// imports out by design; a circle of types is still two modules that can
// only be understood together, so this rule follows every relative
// import and re-export. It reads the other modules' import lines as text
// (they are formatted code, one statement per line start).
import fs from "node:fs";
import path from "node:path";

const exts = [".ts", ".tsx", ".js"];
const edges = new Map(); // file -> files it imports (relative imports only)

function resolve(from, spec) {
  if (!spec.startsWith(".")) return null;
  const base = path.resolve(path.dirname(from), spec);
  for (const c of [base, ...exts.map((e) => base + e), ...exts.map((e) => path.join(base, "index" + e))]) {
    if (exts.includes(path.extname(c)) && fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  }
  return null;
}

const statement = /^\s*(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']/gm;

function importsOf(file) {
  let out = edges.get(file);
  if (out) return out;
  out = [];
  edges.set(file, out);
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return out;
  }
  for (const m of text.matchAll(statement)) {
    const to = resolve(file, m[1]);
    if (to && !out.includes(to)) out.push(to);
  }
  return out;
}

// pathBack is a chain of imports from start back to target, or null.
function pathBack(start, target) {
  const seen = new Set();
  const walk = (f, chain) => {
    if (f === target) return chain;
    if (seen.has(f)) return null;
    seen.add(f);
    for (const to of importsOf(f)) {
      const found = walk(to, [...chain, to]);
      if (found) return found;
    }
    return null;
  };
  return walk(start, [start]);
}

export default {
  meta: {
    type: "problem",
    docs: { description: "No circle of imports, type-only imports included" },
    messages: { cycle: "This import leads back here: {{chain}}." },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const check = (node) => {
      const to = node.source && resolve(file, node.source.value);
      if (!to) return;
      const chain = pathBack(to, file);
      if (chain) {
        const root = context.cwd;
        context.report({ node, messageId: "cycle", data: { chain: [file, ...chain].map((f) => path.relative(root, f)).join(" → ") } });
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};
