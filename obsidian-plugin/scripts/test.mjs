// Run the plugin's tests: `node scripts/test.mjs unit|integration|browser ...`.
//
// Each suite's test/<suite>/*.test.ts is bundled by esbuild — with `obsidian` replaced by
// the stand-in in test/support/obsidian.ts, since the npm package is types only — and run
// by Node's own test runner, one file at a time (the integration and browser suites start
// real daemons). The browser suite also bundles test/browser/page.ts for Chromium.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const suites = process.argv.slice(2);
if (!suites.length || suites.some((s) => !["unit", "integration", "browser"].includes(s))) {
  console.error("usage: node scripts/test.mjs unit|integration|browser ...");
  process.exit(2);
}
const alias = { obsidian: join(here, "test/support/obsidian.ts") };
const external = ["happy-dom", "playwright-core", "typescript", ...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
const files = [];
for (const suite of suites) {
  const dir = join(here, "test", suite);
  const out = join(here, ".build", suite);
  rmSync(out, { recursive: true, force: true });
  const entries = readdirSync(dir).filter((f) => f.endsWith(".test.ts")).sort();
  await build({
    absWorkingDir: here,
    entryPoints: entries.map((f) => join(dir, f)),
    outdir: out,
    outExtension: { ".js": ".cjs" },
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    alias,
    external,
    sourcemap: "inline",
    logLevel: "warning",
  });
  if (suite === "browser") {
    await build({
      absWorkingDir: here,
      entryPoints: [join(dir, "page.ts")],
      outfile: join(out, "page.js"),
      bundle: true,
      format: "iife",
      platform: "browser",
      target: "chrome120",
      alias,
      external: ["http"],
      logLevel: "warning",
    });
  }
  files.push(...entries.map((f) => join(out, f.replace(/\.ts$/, ".cjs"))));
}
const r = spawnSync(
  process.execPath,
  ["--test", "--test-concurrency=1", "--test-reporter=spec", ...files],
  { stdio: "inherit", cwd: here, env: process.env },
);
process.exit(r.status ?? 1);
