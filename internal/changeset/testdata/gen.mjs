// Generates random cases for the Go change sets and what @codemirror/state
// (the web app's own copy, web/node_modules) makes of each.
// Usage: node gen.mjs SEED COUNT > cases.json
// The committed golden.json is `node gen.mjs 1 2000`; the Go tests also
// run it with a fresh seed when Node and web/node_modules are there.
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const { ChangeSet, Text, MapMode } = await import(join(here, "../../../web/node_modules/@codemirror/state/dist/index.js"));

const seed = Number(process.argv[2] || 1);
const count = Number(process.argv[3] || 2000);

// mulberry32: small, seeded, the same on every machine.
let state = seed >>> 0;
function rand() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n) => Math.floor(rand() * n);
const pieces = ["a", "b", "c", " ", "\n", "é", "中", "😀", "xyz", "ß"];
const insertPieces = [...pieces, "\r\n", "\r", "👍🏽"];

function str(max, from) {
  let s = "";
  for (let n = int(max + 1); n > 0; n--) s += from[int(from.length)];
  return s;
}

// Positions a change may start or end at: not inside a surrogate pair.
function boundaries(doc) {
  const out = [0];
  let p = 0;
  for (const ch of doc) {
    p += ch.length;
    out.push(p);
  }
  return out;
}

function specs(doc) {
  const b = boundaries(doc);
  const out = [];
  for (let n = int(5); n > 0; n--) {
    let from = b[int(b.length)], to = b[int(b.length)];
    if (from > to) [from, to] = [to, from];
    if (rand() < 0.3) to = from;
    const insert = rand() < 0.3 ? "" : str(4, insertPieces);
    out.push({ from, to, insert });
  }
  // Mostly in order, sometimes not (ChangeSet.of then composes).
  if (rand() < 0.7) out.sort((x, y) => x.from - y.from || x.to - y.to);
  return out;
}

const text = (s) => Text.of(s.split("\n"));
const cases = [];
for (let k = 0; k < count; k++) {
  const doc = str(24, pieces);
  const len = doc.length;
  const sa = specs(doc), sb = specs(doc);
  const a = ChangeSet.of(sa, len), b = ChangeSet.of(sb, len);
  const docA = a.apply(text(doc)).toString();
  const sc = specs(docA);
  const c = ChangeSet.of(sc, docA.length);
  const bd = boundaries(doc);
  const pos = [];
  for (let n = 0; n < 4; n++) {
    const p = bd[int(bd.length)], assoc = rand() < 0.5 ? -1 : 1, mode = int(4);
    pos.push({ pos: p, assoc, mode, mapped: a.mapPos(p, assoc, mode) });
  }
  const aOverB = a.map(b), aOverBBefore = a.map(b, true), bOverA = b.map(a);
  cases.push({
    doc, specs_a: sa, specs_b: sb, specs_c: sc,
    a: a.toJSON(), b: b.toJSON(), c: c.toJSON(),
    apply_a: docA,
    compose_ac: a.compose(c).toJSON(),
    apply_ac: a.compose(c).apply(text(doc)).toString(),
    map_a_b: aOverB.toJSON(),
    map_a_b_before: aOverBBefore.toJSON(),
    converged: b.compose(aOverB).apply(text(doc)).toString(),
    converged_before: a.compose(b.map(a, true)).apply(text(doc)).toString(),
    converged_check: a.compose(bOverA).apply(text(doc)).toString(),
    invert_a: a.invert(text(doc)).toJSON(),
    map_pos: pos,
  });
}
process.stdout.write(JSON.stringify(cases) + "\n");
