// node --test eslint/: foundry/wire-types refuses a hand-written wire type
// and passes the ones taken from the OpenAPI document.
import { test } from "node:test";
import { RuleTester } from "eslint";
import tseslint from "typescript-eslint";
import rule from "./wire-types.js";

RuleTester.describe = (_, fn) => fn();
RuleTester.it = (name, fn) => test(name, fn);
RuleTester.itOnly = RuleTester.it;

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: "module" } });

const header = 'import type { components, paths } from "./schema";\nexport type Schema<N extends keyof components["schemas"]> = components["schemas"][N];\n';
const wire = [{ wire: true }];

tester.run("wire-types in src/api/types.ts", rule, {
  valid: [
    { options: wire, code: header + 'export type Note = Schema<"NoteSummary">;' },
    { options: wire, code: header + 'export type Written = Pick<Schema<"NoteWrite">, "version">;' },
    { options: wire, code: header + 'type Note = Schema<"NoteSummary">;\nexport type Listed = Omit<Note, "updated_at">;' },
    { options: wire, code: header + "export type Route = keyof paths;" },
    {
      options: wire,
      code: header + "export type Fields<T> = { [K in Exclude<keyof T, \"expected_version\">]?: NonNullable<T[K]> };\nexport type Change = Fields<Schema<\"UpdateNoteRequest\">>;",
    },
    {
      options: wire,
      code: header + "export type Query<R extends keyof paths> = paths[R] extends { get: { parameters: { query?: infer Q } } } ? Q : never;",
    },
  ],
  invalid: [
    { options: wire, code: header + "export type Note = { id: string; title: string };", errors: [{ messageId: "ungrounded" }, { messageId: "shape" }] },
    { options: wire, code: header + "export interface Note { id: string }", errors: [{ messageId: "shape" }] },
    { options: wire, code: header + 'export type Kind = "snippet" | "repository";', errors: [{ messageId: "ungrounded" }, { messageId: "literal" }, { messageId: "literal" }] },
    { options: wire, code: header + 'export type Written = Schema<"NoteWrite"> & { extra: number };', errors: [{ messageId: "shape" }] },
    { options: wire, code: header + "export type Names = Record<string, string>;", errors: [{ messageId: "ungrounded" }] },
    { options: wire, code: header + "export enum Kind { A }", errors: [{ messageId: "shape" }] },
  ],
});

tester.run("wire-types elsewhere in the app", rule, {
  valid: [
    { code: "type Props = { noteId: string; onVersion: (v: number) => void };" },
    { code: 'import type { Sheet } from "../api";\ntype SheetRef = Pick<Sheet, "sheet_id" | "name">;' },
  ],
  invalid: [
    { code: "type SheetRef = { sheet_id: string; name: string };", errors: [{ messageId: "snake" }] },
    { code: "function f(t: { id: string; tab_id: string }) { return t; }", errors: [{ messageId: "snake" }] },
    { code: "interface Row { updated_at: string }", errors: [{ messageId: "snake" }] },
  ],
});
