// Build main.js (what Obsidian loads) from src/. `node scripts/build.mjs [--out FILE]`.
// The output is committed and shipped inside the Python wheel; tests/test_obsidian_plugin.py
// rebuilds it into a temp file and checks the committed one is byte for byte the same.
import { build } from "esbuild";
import { builtinModules } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const outIndex = args.indexOf("--out");
const outfile = outIndex >= 0 ? args[outIndex + 1] : join(here, "main.js");

await build({
  absWorkingDir: here,
  entryPoints: ["src/main.ts"],
  bundle: true,
  outfile,
  format: "cjs",
  platform: "browser",
  target: "es2020",
  external: ["obsidian", "electron", "@codemirror/*", ...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
  banner: { js: "/* memvault Obsidian plugin — built from obsidian-plugin/src by scripts/build.mjs; do not edit */" },
  sourcemap: false,
  minify: false,
  treeShaking: true,
  legalComments: "none",
  logLevel: "warning",
});
