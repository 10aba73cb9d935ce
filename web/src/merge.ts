import { diff3Merge, diffComm } from "node-diff3";

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
