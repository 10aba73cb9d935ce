// The sheet's formula copies (src/components/SheetTab/formula.ts, what the
// fill handle writes) and number formats (format.ts). Bundled and run by
// internal/browsertest's TestSheetFormulaUnits (node --test).
import { test } from "node:test";
import assert from "node:assert/strict";
import { isError, shiftFormula } from "../src/components/SheetTab/formula";
import { dateOf, formatAt, formatNumber, readFormats } from "../src/components/SheetTab/format";

test("relative references move with the copy", () => {
  assert.equal(shiftFormula("=A1*2", 1, 0), "=A2*2");
  assert.equal(shiftFormula("=SUM(B2:B9)", 0, 2), "=SUM(D2:D9)");
  assert.equal(shiftFormula("=a1+b2", 1, 1), "=B2+C3");
});

test("$ keeps a column or a row", () => {
  assert.equal(shiftFormula("=$A$1+A1", 2, 1), "=$A$1+B3");
  assert.equal(shiftFormula("=A$1+$A1", 1, 1), "=B$1+$A2");
});

test("a reference moved off the grid is #REF!", () => {
  assert.equal(shiftFormula("=A1", -1, 0), "=#REF!");
  assert.equal(shiftFormula("=B2+A1", 0, -1), "=A2+#REF!");
});

test("text in quotes, functions and numbers stay", () => {
  assert.equal(shiftFormula('=CONCAT("A1 and ""B2""", A1)', 1, 0), '=CONCAT("A1 and ""B2""", A2)');
  assert.equal(shiftFormula("=LOG10(A1)*1E5+2.5", 1, 0), "=LOG10(A2)*1E5+2.5");
  assert.equal(shiftFormula("=IF(TRUE, A1, 0)", 1, 0), "=IF(TRUE, A2, 0)");
});

test("references to other sheets move too, their names stay", () => {
  assert.equal(shiftFormula("='Sheet 2'!A1+Costs!B3", 1, 0), "='Sheet 2'!A2+Costs!B4");
  assert.equal(shiftFormula("='It''s A1'!C1", 0, 1), "='It''s A1'!D1");
});

test("a value is no formula", () => {
  assert.equal(shiftFormula("A1", 1, 0), "A1");
  assert.equal(shiftFormula("=A1", 0, 0), "=A1");
});

test("errors", () => {
  assert.ok(isError("#DIV/0!"));
  assert.ok(isError("#CYCLE!"));
  assert.ok(isError("#NAME?"));
  assert.ok(isError("#N/A"));
  assert.ok(!isError("# of items"));
});

test("number formats", () => {
  assert.equal(formatNumber(1234.5, "currency"), "$1,234.50");
  assert.equal(formatNumber(1234567.891, "number"), "1,234,567.89");
  assert.equal(formatNumber(0.125, "percent"), "12.50%");
  assert.equal(formatNumber(45306, "date"), "2024-01-15");
  assert.equal(formatNumber(12.5, "general"), "12.5");
  assert.equal(dateOf(1), "1900-01-01");
  assert.equal(dateOf(61), "1900-03-01");
});

test("a later format wins where two overlap", () => {
  const fs = readFormats([
    { range: "B2:C9", format: "number" },
    { range: "C3", format: "currency" },
    { range: "nonsense", format: "date" },
  ]);
  assert.equal(formatAt(fs, 1, 1), "number");
  assert.equal(formatAt(fs, 2, 2), "currency");
  assert.equal(formatAt(fs, 0, 0), undefined);
});
