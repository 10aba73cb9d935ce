// Number formats: how a sheet's numbers show (the values stay as they
// are). A sheet's formats are a list of ranges, each with a format, the
// later winning where two overlap.

import { colIndex } from "./formula";

export type NumberFormat = "general" | "number" | "percent" | "currency" | "date";
export const FORMATS: { key: NumberFormat; text: string; title: string }[] = [
  { key: "general", text: "General", title: "General: numbers as typed" },
  { key: "number", text: "1,234.56", title: "Number: two decimals, thousands separated" },
  { key: "percent", text: "%", title: "Percent" },
  { key: "currency", text: "$", title: "Currency (US dollars)" },
  { key: "date", text: "Date", title: "Date (yyyy-mm-dd from a date serial number)" },
];

export type FormatRange = { range?: string; format?: string };
export type Rect = { r0: number; c0: number; r1: number; c1: number };

const number = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const percent = new Intl.NumberFormat("en-US", { style: "percent", minimumFractionDigits: 2, maximumFractionDigits: 2 });
const currency = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 2 });

// dateOf is an Excel date serial (the 1900 system, with its 29 February
// 1900 that never was) as yyyy-mm-dd: 45306 → 2024-01-15.
export function dateOf(serial: number): string {
  if (!Number.isFinite(serial) || serial < 1 || serial > 2_958_465) return String(serial);
  const days = Math.floor(serial) - (serial >= 61 ? 1 : 0);
  const d = new Date(Date.UTC(1899, 11, 31) + days * 86_400_000);
  const p = (n: number) => String(n).padStart(2, "0");
  return d.getUTCFullYear() + "-" + p(d.getUTCMonth() + 1) + "-" + p(d.getUTCDate());
}

// formatNumber is n as format shows it.
export function formatNumber(n: number, format: string | undefined): string {
  switch (format) {
    case "number":
      return number.format(n);
    case "percent":
      return percent.format(n);
    case "currency":
      return currency.format(n);
    case "date":
      return dateOf(n);
  }
  return String(n);
}

const A1 = /^\$?([A-Za-z]{1,3})\$?(\d+)$/;

// parseRange reads "B2:C9" (or "B2") as a rectangle, null when it is no range.
export function parseRange(range: string): Rect | null {
  const [a, b = a] = range.split(":");
  const m = A1.exec(a ?? ""), n = A1.exec(b ?? "");
  if (!m || !n) return null;
  const r0 = Number(m[2]) - 1, c0 = colIndex(m[1]), r1 = Number(n[2]) - 1, c1 = colIndex(n[1]);
  return { r0: Math.min(r0, r1), c0: Math.min(c0, c1), r1: Math.max(r0, r1), c1: Math.max(c0, c1) };
}

export type Formats = { rect: Rect; format: string }[];

export function readFormats(list: FormatRange[] | undefined | null): Formats {
  const out: Formats = [];
  for (const f of list ?? []) {
    const rect = parseRange(f.range ?? "");
    if (rect && f.format) out.push({ rect, format: f.format });
  }
  return out;
}

// formatAt is the format of cell (r, c): the last range holding it.
export function formatAt(fs: Formats, r: number, c: number): string | undefined {
  for (let i = fs.length - 1; i >= 0; i--) {
    const { rect, format } = fs[i];
    if (r >= rect.r0 && r <= rect.r1 && c >= rect.c0 && c <= rect.c1) return format;
  }
  return undefined;
}
