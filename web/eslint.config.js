// ESLint for the web app: npm run --prefix web lint, which .ci/run runs
// with no warning allowed.
//
// typescript-eslint parses with TypeScript's JavaScript API, which
// TypeScript 7 (the native compiler, that tsc is) does not have: the
// package named "typescript", which typescript-eslint loads by that name,
// is TypeScript 6.0 for it alone, and tsc comes from "typescript-native"
// (npm:typescript@7.0.2; see package.json's typecheck script).
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";
import { createNodeResolver, importX } from "eslint-plugin-import-x";
import noImportCycle from "./eslint/no-import-cycle.js";
import wireTypes from "./eslint/wire-types.js";

export default defineConfig(
  // schema.d.ts is generated from the OpenAPI document (npm run gen:api),
  // never edited.
  { ignores: ["node_modules/**", "src/api/schema.d.ts"] },
  {
    files: ["eslint.config.js", "eslint/**/*.js"],
    extends: [js.configs.recommended],
    languageOptions: { globals: { process: "readonly" } },
  },
  {
    // The live hub's tests (run in node by internal/web/bundle).
    files: ["test/**/*.js"],
    extends: [js.configs.recommended],
    languageOptions: { globals: { EventTarget: "readonly", Event: "readonly", MessageEvent: "readonly" } },
  },
  {
    files: ["src/**/*.{ts,tsx}", "sandbox/**/*.{ts,tsx}"],
    extends: [js.configs.recommended, tseslint.configs.recommended, reactHooks.configs.flat["recommended-latest"]],
    plugins: { "import-x": importX, foundry: { rules: { "no-import-cycle": noImportCycle, "wire-types": wireTypes } } },
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      parserOptions: { ecmaFeatures: { jsx: true } },
    },
    settings: {
      "import-x/resolver-next": [createNodeResolver({ extensions: [".ts", ".tsx", ".js"] })],
      // Stylesheets are imported for esbuild to bundle; they import nothing.
      "import-x/ignore": ["\\.css$"],
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // An import circle makes the order modules run in depend on who
      // imports first: none, however long.
      "import-x/no-cycle": ["error", { maxDepth: Infinity, ignoreExternal: true }],
      // …and of types: import-x/no-cycle leaves type-only imports out.
      "foundry/no-import-cycle": "error",
      "import-x/no-self-import": "error",
      // Wire shapes (the REST answers) live in src/api, the one module that
      // talks to the server: nothing else calls fetch or XMLHttpRequest.
      "no-restricted-globals": [
        "error",
        { name: "fetch", message: "Talk to the server through src/api." },
        { name: "XMLHttpRequest", message: "Talk to the server through src/api." },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // The REST API's wire types come from the OpenAPI document: none is
      // spelt out by hand (eslint/wire-types.js).
      "foundry/wire-types": "error",
    },
  },
  {
    // Where the app names the wire types: each one the document's.
    files: ["src/api/types.ts"],
    rules: { "foundry/wire-types": ["error", { wire: true }] },
  },
  {
    // The one door to the server, and the sandbox page (whose apps' code
    // has no server to talk to but the page that runs it).
    files: ["src/api/**", "sandbox/**"],
    rules: { "no-restricted-globals": "off" },
  },
);
