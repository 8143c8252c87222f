/**
 * manifest.json's minAppVersion is the newest `@since` among the Obsidian APIs the plugin
 * uses — read from obsidian.d.ts by the TypeScript checker, not guessed: every identifier
 * in src/ that resolves to a declaration in the `obsidian` package counts, and so does
 * every member a plugin class overrides (an abstract method is an API too).
 */
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { it } from "node:test";
import ts from "typescript";
import { REPO } from "../support/daemon";

const HERE = resolve(REPO, "obsidian-plugin");

function since(decl: ts.Declaration): string | null {
  for (const tag of ts.getJSDocTags(decl)) {
    if (tag.tagName.text !== "since") continue;
    const text = typeof tag.comment === "string" ? tag.comment : ts.getTextOfJSDocComment(tag.comment) ?? "";
    const m = /\d+\.\d+\.\d+/.exec(text);
    if (m) return m[0];
  }
  return null;
}

function newer(a: string, b: string): boolean {
  const [x, y] = [a, b].map((v) => v.split(".").map(Number));
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i];
  return false;
}

it("manifest.json's minAppVersion is the newest @since of the APIs used", () => {
  const src = join(HERE, "src");
  const files = readdirSync(src).filter((f) => f.endsWith(".ts")).map((f) => join(src, f));
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2020,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    skipLibCheck: true,
    types: ["node"],
    lib: ["lib.es2021.d.ts", "lib.dom.d.ts"],
    baseUrl: HERE,
  });
  const checker = program.getTypeChecker();
  const used = new Map<string, string>(); // api -> version
  const record = (sym: ts.Symbol | undefined, name: string) => {
    if (!sym) return;
    if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
    for (const d of sym.declarations ?? []) {
      if (!d.getSourceFile().fileName.includes("/node_modules/obsidian/")) continue;
      const v = since(d);
      if (v) used.set(name, v);
    }
  };
  for (const sf of program.getSourceFiles()) {
    if (!sf.fileName.startsWith(src)) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node)) record(checker.getSymbolAtLocation(node), node.text);
      // an overridden method is an API the plugin relies on Obsidian to call; a property
      // the plugin declares and assigns itself (like `settings`) is not
      if (ts.isMethodDeclaration(node) && ts.isClassDeclaration(node.parent)) {
        const cls = checker.getTypeAtLocation(node.parent) as ts.InterfaceType;
        for (const base of checker.getBaseTypes(cls) ?? []) {
          const name = node.name.getText();
          record(checker.getPropertyOfType(base, name), `${checker.typeToString(base)}.${name}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  assert.ok(used.size > 20, `only ${used.size} Obsidian APIs found: the scan is broken`);
  let max = "0.0.0";
  for (const v of used.values()) if (newer(v, max)) max = v;
  const newest = [...used].filter(([, v]) => v === max).map(([k]) => k);
  if (process.env.MEMVAULT_SHOW_APIS) console.log([...used].sort((a, b) => (newer(a[1], b[1]) ? -1 : 1)));
  const manifest = JSON.parse(readFileSync(join(HERE, "manifest.json"), "utf8"));
  const versions = JSON.parse(readFileSync(join(HERE, "versions.json"), "utf8"));
  assert.equal(manifest.minAppVersion, max, `the newest APIs used (${newest.join(", ")}) need Obsidian ${max}`);
  assert.equal(versions[manifest.version], max, "versions.json maps this version to its minAppVersion");
  assert.equal(manifest.isDesktopOnly, true, "Node's http is used on desktop");
});
