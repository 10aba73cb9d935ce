import { diff3Merge, diffComm, diffPatch } from "node-diff3";

// A line-based three-way merge of the text a person started from (base),
// what the server has now (theirs) and the person's text (mine).

export type Region = { ok: string[] } | { theirs: string[]; mine: string[] };

export type Merged = {
  // clean: no line was changed on both sides differently; text is the merge.
  clean: boolean;
  // text: the merge; where both sides changed the same lines, their lines
  // and then mine, so that nothing is lost.
  text: string;
  regions: Region[];
};

export function merge3(base: string, theirs: string, mine: string): Merged {
  const regions: Region[] = [];
  for (const r of diff3Merge<string>(mine.split("\n"), base.split("\n"), theirs.split("\n"), { excludeFalseConflicts: true })) {
    if (r.ok) regions.push({ ok: r.ok });
    else if (r.conflict) regions.push({ theirs: r.conflict.b, mine: r.conflict.a });
  }
  const lines: string[] = [];
  let clean = true;
  for (const r of regions) {
    if ("ok" in r) lines.push(...r.ok);
    else {
      clean = false;
      lines.push(...r.theirs, ...r.mine);
    }
  }
  return { clean, text: lines.join("\n"), regions };
}

// changedLines is what turned base into theirs, line by line: "- " for a
// line taken out, "+ " for a line put in (unchanged lines are left out).
export function changedLines(base: string, theirs: string): string[] {
  const out: string[] = [];
  for (const r of diffComm(base.split("\n"), theirs.split("\n"))) {
    if ("common" in r && r.common) continue;
    for (const l of r.buffer1 ?? []) out.push("- " + l);
    for (const l of r.buffer2 ?? []) out.push("+ " + l);
  }
  return out;
}

// TextChange replaces from…to of a text with insert (offsets in UTF-16
// code units, as CodeMirror counts them).
export type TextChange = { from: number; to: number; insert: string };

// splitLines cuts text into lines that keep their "\n", so that the lines
// joined are the text again.
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

// textChanges is a small set of changes that turns a into b: the lines
// that differ, each narrowed to the characters that differ. Applied to an
// editor holding a, it leaves the cursor, the selection and the undo
// history of everything outside the changes as they were.
export function textChanges(a: string, b: string): TextChange[] {
  if (a === b) return [];
  const al = splitLines(a);
  const bl = splitLines(b);
  const starts: number[] = [0];
  for (const l of al) starts.push(starts[starts.length - 1] + l.length);
  const out: TextChange[] = [];
  for (const h of diffPatch<string>(al, bl)) {
    let from = starts[h.buffer1.offset];
    let to = starts[h.buffer1.offset + h.buffer1.length];
    const old = a.slice(from, to);
    let ins = h.buffer2.chunk.join("");
    // Narrow to what differs inside the lines.
    let p = 0;
    while (p < old.length && p < ins.length && old[p] === ins[p]) p++;
    let s = 0;
    while (s < old.length - p && s < ins.length - p && old[old.length - 1 - s] === ins[ins.length - 1 - s]) s++;
    // Never cut a surrogate pair in two.
    if (p > 0 && isHigh(old.charCodeAt(p - 1))) p--;
    if (s > 0 && isLow(old.charCodeAt(old.length - s))) s--;
    from += p;
    to -= s;
    ins = ins.slice(p, ins.length - s);
    if (from !== to || ins !== "") out.push({ from, to, insert: ins });
  }
  return out;
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;
