// The related pane's latency on a big vault, in Chromium (test/bench/related-latency.ts).
// `node scripts/bench.mjs --vault PATH --runs 200`; see bench/RESULTS.md.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { builtinModules } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const alias = { obsidian: join(here, "test/support/obsidian.ts") };
await build({
  absWorkingDir: here,
  entryPoints: [join(here, "test/bench/related-latency.ts")],
  outfile: join(here, ".build/bench/related-latency.cjs"),
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  external: ["playwright-core", ...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
  logLevel: "warning",
});
await build({
  absWorkingDir: here,
  entryPoints: [join(here, "test/browser/page.ts")],
  outfile: join(here, ".build/browser/page.js"),
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "chrome120",
  alias,
  external: ["http"],
  logLevel: "warning",
});
const r = spawnSync(process.execPath, [join(here, ".build/bench/related-latency.cjs"), ...process.argv.slice(2)], {
  stdio: "inherit",
});
process.exit(r.status ?? 1);
