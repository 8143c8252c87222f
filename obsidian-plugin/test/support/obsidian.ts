/**
 * A minimal stand-in for the `obsidian` module (the npm package is types only): just the
 * classes and helpers the plugin uses, behaving the way Obsidian documents them, over a
 * real DOM (happy-dom in Node, Chromium in the browser tests). Test-only helpers are
 * marked "stand-in:". It is bundled in place of `obsidian` by scripts/test.mjs.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */

// -- DOM helpers Obsidian adds to HTMLElement ------------------------------------------------

interface DomInfo {
  cls?: string | string[];
  text?: string;
  attr?: Record<string, string | number | boolean | null>;
  title?: string;
  type?: string;
  value?: string;
  placeholder?: string;
}

function applyInfo(el: HTMLElement, o?: DomInfo | string): void {
  if (!o) return;
  if (typeof o === "string") {
    el.className = o;
    return;
  }
  if (o.cls) el.className = Array.isArray(o.cls) ? o.cls.join(" ") : o.cls;
  if (o.text !== undefined) el.textContent = o.text;
  if (o.title) el.title = o.title;
  if (o.type) el.setAttribute("type", o.type);
  if (o.value !== undefined) (el as HTMLInputElement).value = o.value;
  if (o.placeholder) el.setAttribute("placeholder", o.placeholder);
  for (const [k, v] of Object.entries(o.attr ?? {})) if (v !== null && v !== false) el.setAttribute(k, String(v));
}

export function installDomHelpers(win: any = globalThis): void {
  const P = win.HTMLElement.prototype as any;
  if (P.createEl) return;
  P.createEl = function (tag: string, o?: DomInfo | string, cb?: (el: HTMLElement) => void) {
    const el = this.ownerDocument.createElement(tag);
    applyInfo(el, o);
    this.appendChild(el);
    cb?.(el);
    return el;
  };
  P.createDiv = function (o?: DomInfo | string, cb?: (el: HTMLElement) => void) {
    return this.createEl("div", o, cb);
  };
  P.createSpan = function (o?: DomInfo | string, cb?: (el: HTMLElement) => void) {
    return this.createEl("span", o, cb);
  };
  P.empty = function () {
    while (this.firstChild) this.removeChild(this.firstChild);
  };
  P.setText = function (t: string) {
    this.textContent = t;
  };
  P.addClass = function (...c: string[]) {
    this.classList.add(...c);
  };
  P.removeClass = function (...c: string[]) {
    this.classList.remove(...c);
  };
  P.toggleClass = function (c: string, on: boolean) {
    this.classList.toggle(c, on);
  };
  P.hasClass = function (c: string) {
    return this.classList.contains(c);
  };
  P.setAttr = function (k: string, v: string | number | boolean | null) {
    if (v === null) this.removeAttribute(k);
    else this.setAttribute(k, String(v));
  };
  P.detach = function () {
    this.remove();
  };
}
if (typeof (globalThis as any).HTMLElement !== "undefined") installDomHelpers();

// -- small things ------------------------------------------------------------------------------

export const Platform = { isDesktopApp: true, isDesktop: true, isMobile: false, isMobileApp: false };

/** stand-in: every notice shown, newest last. */
export const shownNotices: string[] = [];

export class Notice {
  noticeEl: HTMLElement;
  constructor(message: string, duration?: number) {
    shownNotices.push(message);
    const doc = (globalThis as any).document as Document;
    let box = doc.body.querySelector(".notice-container") as HTMLElement | null;
    if (!box) box = (doc.body as any).createDiv({ cls: "notice-container" });
    this.noticeEl = (box as any).createDiv({ cls: "notice", text: message });
    const el = this.noticeEl;
    if (duration !== 0) setTimeout(() => el.remove(), duration ?? 5000);
  }
  hide(): void {
    this.noticeEl.remove();
  }
}

// Lucide's paths for the icons the plugin names (Obsidian ships Lucide).
const ICONS: Record<string, string> = {
  link: '<path d="M10 13a5 5 0 0 0 7.54.54l3-3a5 5 0 0 0-7.07-7.07l-1.72 1.71"/><path d="M14 11a5 5 0 0 0-7.54-.54l-3 3a5 5 0 0 0 7.07 7.07l1.71-1.71"/>',
  search: '<circle cx="11" cy="11" r="8"/><path d="m21 21-4.3-4.3"/>',
  library: '<path d="m16 6 4 14"/><path d="M12 6v14"/><path d="M8 8v12"/><path d="M4 4v16"/>',
};

export function setIcon(el: HTMLElement, name: string): void {
  el.empty();
  el.dataset.icon = name;
  el.innerHTML = `<svg class="svg-icon" xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">${ICONS[name] ?? '<circle cx="12" cy="12" r="4"/>'}</svg>`;
}

export type Modifier = "Mod" | "Ctrl" | "Meta" | "Shift" | "Alt";

export class Keymap {
  static isModifier(evt: MouseEvent | KeyboardEvent, m: Modifier): boolean {
    if (m === "Mod") return evt.ctrlKey || evt.metaKey;
    if (m === "Ctrl") return evt.ctrlKey;
    if (m === "Meta") return evt.metaKey;
    if (m === "Shift") return evt.shiftKey;
    return evt.altKey;
  }
}

export class Scope {
  keys: { mods: Modifier[]; key: string; fn: (evt: KeyboardEvent) => any }[] = [];
  register(mods: Modifier[], key: string, fn: (evt: KeyboardEvent) => any): unknown {
    const k = { mods, key, fn };
    this.keys.push(k);
    return k;
  }
  /** stand-in: true when a registered key handled the event. */
  handle(evt: KeyboardEvent): boolean {
    for (const k of this.keys) {
      if (k.key !== evt.key) continue;
      const want = new Set(k.mods);
      const mod = evt.ctrlKey || evt.metaKey;
      if (want.has("Mod") !== mod || want.has("Shift") !== evt.shiftKey || want.has("Alt") !== evt.altKey) continue;
      if (k.fn(evt) === false) return true;
    }
    return false;
  }
}

export function debounce<T extends unknown[]>(fn: (...a: T) => unknown, ms = 0): (...a: T) => void {
  let t: any = null;
  return (...a: T) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...a), ms);
  };
}

export function normalizePath(p: string): string {
  return p.replace(/\\/g, "/").replace(/\/+/g, "/").replace(/^\/|\/$/g, "");
}

// -- events ------------------------------------------------------------------------------------

export interface EventRef {
  e: Events;
  name: string;
  fn: (...a: any[]) => any;
}

export class Events {
  private handlers = new Map<string, Set<(...a: any[]) => any>>();
  on(name: string, fn: (...a: any[]) => any): EventRef {
    if (!this.handlers.has(name)) this.handlers.set(name, new Set());
    this.handlers.get(name)!.add(fn);
    return { e: this, name, fn };
  }
  offref(ref: EventRef): void {
    this.handlers.get(ref.name)?.delete(ref.fn);
  }
  trigger(name: string, ...a: any[]): void {
    for (const fn of [...(this.handlers.get(name) ?? [])]) fn(...a);
  }
}

// -- files ----------------------------------------------------------------------------------------

export class TAbstractFile {
  path = "";
  name = "";
  parent: TFolder | null = null;
  vault!: Vault;
}

export class TFile extends TAbstractFile {
  basename = "";
  extension = "";
  stat = { ctime: 0, mtime: 0, size: 0 };
  constructor(path = "") {
    super();
    this.path = path;
    this.name = path.split("/").pop() ?? path;
    const dot = this.name.lastIndexOf(".");
    this.basename = dot > 0 ? this.name.slice(0, dot) : this.name;
    this.extension = dot > 0 ? this.name.slice(dot + 1).toLowerCase() : "";
  }
}

export class TFolder extends TAbstractFile {
  children: TAbstractFile[] = [];
}

/** The adapter the plugin reads daemon.json through: the stand-in gets its reads from a
 *  function (Node's fs in Node, a function the browser test exposes to the page). */
export class FileSystemAdapter {
  constructor(
    private readonly base: string,
    private readonly io: { read(path: string): Promise<string | null> },
  ) {}
  getBasePath(): string {
    return this.base;
  }
  async exists(path: string): Promise<boolean> {
    return (await this.io.read(path)) !== null;
  }
  async read(path: string): Promise<string> {
    const text = await this.io.read(path);
    if (text === null) throw new Error(`ENOENT: ${path}`);
    return text;
  }
  /** stand-in: counts of writes, which must stay 0 (the plugin never writes). */
  writes = 0;
  async write(): Promise<void> {
    this.writes++;
  }
  async modify(): Promise<void> {
    this.writes++;
  }
}

export class Vault extends Events {
  private files = new Map<string, TFile>();
  constructor(readonly adapter: FileSystemAdapter) {
    super();
  }
  /** stand-in: make ``paths`` the vault's files. */
  setFiles(paths: string[]): void {
    this.files.clear();
    for (const p of paths) {
      const f = new TFile(p);
      f.vault = this;
      this.files.set(p, f);
    }
  }
  getAbstractFileByPath(path: string): TAbstractFile | null {
    return this.files.get(normalizePath(path)) ?? null;
  }
  getFiles(): TFile[] {
    return [...this.files.values()];
  }
  getMarkdownFiles(): TFile[] {
    return this.getFiles().filter((f) => f.extension === "md");
  }
  getName(): string {
    return this.adapter.getBasePath().split("/").pop() ?? "vault";
  }
  async modify(): Promise<void> {
    (this.adapter as any).writes++;
  }
}

export class FileManager {
  constructor(private readonly app: App) {}
  generateMarkdownLink(file: TFile, _source: string, subpath?: string, alias?: string): string {
    const same = this.app.vault.getMarkdownFiles().filter((f) => f.basename === file.basename);
    const target = same.length > 1 ? file.path.replace(/\.md$/, "") : file.basename;
    return `[[${target}${subpath ?? ""}${alias ? `|${alias}` : ""}]]`;
  }
}

// -- editor and views -------------------------------------------------------------------------

export interface EditorPosition {
  line: number;
  ch: number;
}

/** stand-in: a text buffer with a cursor; enough of Editor for inserting a link. */
export class Editor {
  lines: string[];
  cursor: EditorPosition = { line: 0, ch: 0 };
  anchor: EditorPosition = { line: 0, ch: 0 };
  scrolledTo: EditorPosition | null = null;
  constructor(text = "") {
    this.lines = text.split("\n");
  }
  getValue(): string {
    return this.lines.join("\n");
  }
  setValue(t: string): void {
    this.lines = t.split("\n");
  }
  lineCount(): number {
    return this.lines.length;
  }
  getLine(n: number): string {
    return this.lines[n] ?? "";
  }
  getCursor(): EditorPosition {
    return { ...this.cursor };
  }
  setCursor(pos: EditorPosition | number, ch?: number): void {
    this.cursor = typeof pos === "number" ? { line: pos, ch: ch ?? 0 } : { ...pos };
    this.anchor = { ...this.cursor };
  }
  setSelection(anchor: EditorPosition, head: EditorPosition): void {
    this.anchor = { ...anchor };
    this.cursor = { ...head };
  }
  private offset(p: EditorPosition): number {
    let o = 0;
    for (let i = 0; i < p.line; i++) o += this.lines[i].length + 1;
    return o + p.ch;
  }
  getSelection(): string {
    const [a, b] = [this.offset(this.anchor), this.offset(this.cursor)].sort((x, y) => x - y);
    return this.getValue().slice(a, b);
  }
  replaceSelection(text: string): void {
    const [a, b] = [this.offset(this.anchor), this.offset(this.cursor)].sort((x, y) => x - y);
    const v = this.getValue();
    const next = v.slice(0, a) + text + v.slice(b);
    this.setValue(next);
    const before = next.slice(0, a + text.length).split("\n");
    this.setCursor({ line: before.length - 1, ch: before[before.length - 1].length });
  }
  scrollIntoView(range: { from: EditorPosition; to: EditorPosition }): void {
    this.scrolledTo = { ...range.from };
  }
  focus(): void {}
}

export abstract class View extends Events {
  app: App;
  containerEl: HTMLElement;
  constructor(readonly leaf: WorkspaceLeaf) {
    super();
    this.app = leaf.app;
    const doc = (globalThis as any).document as Document;
    this.containerEl = doc.createElement("div");
    this.containerEl.className = "workspace-leaf-content";
  }
  abstract getViewType(): string;
  getDisplayText(): string {
    return "";
  }
  getIcon(): string {
    return "document";
  }
  async onOpen(): Promise<void> {}
  async onClose(): Promise<void> {}
  private cleanups: (() => void)[] = [];
  register(cb: () => void): void {
    this.cleanups.push(cb);
  }
  registerEvent(ref: EventRef): void {
    this.cleanups.push(() => ref.e.offref(ref));
  }
  /** stand-in */
  async close(): Promise<void> {
    this.cleanups.forEach((c) => c());
    await this.onClose();
  }
}

export class ItemView extends View {
  contentEl: HTMLElement;
  constructor(leaf: WorkspaceLeaf) {
    super(leaf);
    this.contentEl = (this.containerEl as any).createDiv({ cls: "view-content" });
  }
  getViewType(): string {
    return "item";
  }
}

export class FileView extends ItemView {
  file: TFile | null = null;
  getViewType(): string {
    return "file";
  }
}

export class MarkdownView extends FileView {
  editor = new Editor();
  getViewType(): string {
    return "markdown";
  }
}

/** stand-in: what a PDF, a canvas or an image opens in. */
export class OtherFileView extends FileView {
  constructor(
    leaf: WorkspaceLeaf,
    private readonly kind: string,
  ) {
    super(leaf);
  }
  getViewType(): string {
    return this.kind;
  }
}

export class WorkspaceItem {
  constructor(readonly name: string) {}
}

export class WorkspaceLeaf extends Events {
  view: View;
  constructor(
    readonly app: App,
    readonly root: WorkspaceItem,
  ) {
    super();
    this.view = new EmptyView(this);
  }
  getRoot(): WorkspaceItem {
    return this.root;
  }
  /** stand-in: the text each opened file gets in its editor. */
  static contents: (file: TFile) => string = () => "";
  async openFile(file: TFile, state?: { eState?: Record<string, unknown>; active?: boolean }): Promise<void> {
    await this.view.close();
    let view: FileView;
    if (file.extension === "md") {
      const md = new MarkdownView(this);
      md.editor.setValue(WorkspaceLeaf.contents(file));
      view = md;
    } else {
      view = new OtherFileView(this, file.extension);
    }
    view.file = file;
    this.view = view;
    this.app.workspace.attach(this);
    (this as any).lastEState = state?.eState;
    this.app.workspace.trigger("file-open", file);
    if (state?.active !== false) this.app.workspace.setActiveLeaf(this);
  }
  async setViewState(state: { type: string; active?: boolean }): Promise<void> {
    const factory = this.app.workspace.viewFactories.get(state.type);
    if (!factory) throw new Error(`no view type ${state.type}`);
    await this.view.close();
    this.view = factory(this);
    this.app.workspace.attach(this);
    await this.view.onOpen();
  }
}

class EmptyView extends ItemView {
  getViewType(): string {
    return "empty";
  }
}

export class Workspace extends Events {
  rootSplit = new WorkspaceItem("root");
  leftSplit = new WorkspaceItem("left");
  rightSplit = new WorkspaceItem("right");
  leaves: WorkspaceLeaf[] = [];
  activeLeaf: WorkspaceLeaf | null = null;
  private recent: WorkspaceLeaf | null = null;
  viewFactories = new Map<string, (leaf: WorkspaceLeaf) => View>();
  layoutReady = false;
  private readyCallbacks: (() => void)[] = [];
  /** stand-in: where leaves' elements go (the browser test shows them). */
  mainEl: HTMLElement | null = null;
  sideEl: HTMLElement | null = null;

  constructor(private readonly app: App) {
    super();
  }
  get activeEditor(): { editor?: Editor; file: TFile | null } | null {
    const v = this.recent?.view;
    return v instanceof MarkdownView ? { editor: v.editor, file: v.file } : null;
  }
  getActiveFile(): TFile | null {
    const v = this.recent?.view;
    return v instanceof FileView ? v.file : null;
  }
  getLeaf(newLeaf?: boolean | string): WorkspaceLeaf {
    if (!newLeaf && this.recent) return this.recent;
    const leaf = new WorkspaceLeaf(this.app, this.rootSplit);
    this.leaves.push(leaf);
    this.attach(leaf);
    return leaf;
  }
  getRightLeaf(_split: boolean): WorkspaceLeaf | null {
    const leaf = new WorkspaceLeaf(this.app, this.rightSplit);
    this.leaves.push(leaf);
    return leaf;
  }
  getLeavesOfType(type: string): WorkspaceLeaf[] {
    return this.leaves.filter((l) => l.view.getViewType() === type);
  }
  getMostRecentLeaf(): WorkspaceLeaf | null {
    return this.recent;
  }
  async revealLeaf(_leaf: WorkspaceLeaf): Promise<void> {}
  setActiveLeaf(leaf: WorkspaceLeaf): void {
    this.activeLeaf = leaf;
    if (leaf.getRoot() === this.rootSplit) this.recent = leaf;
    this.trigger("active-leaf-change", leaf);
  }
  onLayoutReady(cb: () => void): void {
    if (this.layoutReady) cb();
    else this.readyCallbacks.push(cb);
  }
  /** stand-in */
  ready(): void {
    this.layoutReady = true;
    this.readyCallbacks.splice(0).forEach((cb) => cb());
  }
  /** stand-in: put a leaf's element into the page. */
  attach(leaf: WorkspaceLeaf): void {
    const parent = leaf.getRoot() === this.rootSplit ? this.mainEl : this.sideEl;
    if (parent && !parent.contains(leaf.view.containerEl)) {
      parent.empty();
      parent.appendChild(leaf.view.containerEl);
    }
  }
}

export class App {
  vault: Vault;
  workspace: Workspace;
  fileManager: FileManager;
  constructor(adapter: FileSystemAdapter) {
    this.vault = new Vault(adapter);
    this.workspace = new Workspace(this);
    this.fileManager = new FileManager(this);
  }
}

// -- modals ----------------------------------------------------------------------------------------

const handledKeys = new WeakSet<Event>();

export class Modal {
  containerEl: HTMLElement;
  modalEl: HTMLElement;
  titleEl: HTMLElement;
  contentEl: HTMLElement;
  scope = new Scope();
  isOpen = false;
  constructor(readonly app: App) {
    const doc = (globalThis as any).document as Document;
    this.containerEl = doc.createElement("div");
    this.containerEl.className = "modal-container";
    (this.containerEl as any).createDiv({ cls: "modal-bg" });
    this.modalEl = (this.containerEl as any).createDiv({ cls: "modal" });
    this.titleEl = (this.modalEl as any).createDiv({ cls: "modal-title" });
    this.contentEl = (this.modalEl as any).createDiv({ cls: "modal-content" });
    this.modalEl.addEventListener("keydown", (evt) => {
      if (this.scope.handle(evt)) {
        handledKeys.add(evt);
        evt.preventDefault();
      }
    });
  }
  open(): void {
    const doc = (globalThis as any).document as Document;
    doc.body.appendChild(this.containerEl);
    this.isOpen = true;
    this.onOpen();
  }
  close(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.containerEl.remove();
    this.onClose();
  }
  onOpen(): void {}
  onClose(): void {}
}

export interface Instruction {
  command: string;
  purpose: string;
}

export abstract class SuggestModal<T> extends Modal {
  limit = 100;
  emptyStateText = "No results.";
  inputEl: HTMLInputElement;
  resultContainerEl: HTMLElement;
  private instructionsEl: HTMLElement;
  private values: T[] = [];
  private selected = 0;
  /** stand-in: settles when the suggestions for the latest input are rendered. */
  updated: Promise<void> = Promise.resolve();

  constructor(app: App) {
    super(app);
    this.modalEl.addClass("prompt");
    this.titleEl.remove();
    this.contentEl.remove();
    this.inputEl = (this.modalEl as any).createEl("input", { cls: "prompt-input", type: "text" });
    this.resultContainerEl = (this.modalEl as any).createDiv({ cls: "prompt-results" });
    this.instructionsEl = (this.modalEl as any).createDiv({ cls: "prompt-instructions" });
    this.inputEl.addEventListener("input", () => this.update());
    this.modalEl.addEventListener("keydown", (evt) => {
      if (handledKeys.has(evt)) return; // the scope took it (as Obsidian's keymap does)
      if (evt.key === "ArrowDown") this.select(this.selected + 1);
      else if (evt.key === "ArrowUp") this.select(this.selected - 1);
      else if (evt.key === "Enter") this.selectActiveSuggestion(evt);
      else if (evt.key === "Escape") this.close();
      else return;
      evt.preventDefault();
    });
  }
  setPlaceholder(p: string): void {
    this.inputEl.placeholder = p;
  }
  setInstructions(list: Instruction[]): void {
    this.instructionsEl.empty();
    for (const i of list) {
      const el = (this.instructionsEl as any).createDiv({ cls: "prompt-instruction" });
      el.createSpan({ cls: "prompt-instruction-command", text: i.command });
      el.createSpan({ text: ` ${i.purpose}` });
    }
  }
  open(): void {
    super.open();
    this.update();
    this.inputEl.focus();
  }
  private update(): void {
    const query = this.inputEl.value;
    this.updated = Promise.resolve(this.getSuggestions(query)).then((values) => {
      if (this.inputEl.value !== query) return; // a newer input renders its own
      this.values = values.slice(0, this.limit);
      this.selected = 0;
      this.render();
    });
  }
  private render(): void {
    const box = this.resultContainerEl;
    box.empty();
    if (!this.values.length) {
      (box as any).createDiv({ cls: "suggestion-empty", text: this.emptyStateText });
      return;
    }
    this.values.forEach((v, i) => {
      const el = (box as any).createDiv({ cls: `suggestion-item${i === this.selected ? " is-selected" : ""}` });
      this.renderSuggestion(v, el);
      el.addEventListener("click", (evt: MouseEvent) => this.selectSuggestion(v, evt));
    });
  }
  private select(i: number): void {
    if (!this.values.length) return;
    this.selected = (i + this.values.length) % this.values.length;
    this.render();
  }
  onNoSuggestion(): void {}
  selectSuggestion(value: T, evt: MouseEvent | KeyboardEvent): void {
    this.close();
    this.onChooseSuggestion(value, evt);
  }
  selectActiveSuggestion(evt: MouseEvent | KeyboardEvent): void {
    const v = this.values[this.selected];
    if (v !== undefined) this.selectSuggestion(v, evt);
  }
  abstract getSuggestions(query: string): T[] | Promise<T[]>;
  abstract renderSuggestion(value: T, el: HTMLElement): void;
  abstract onChooseSuggestion(item: T, evt: MouseEvent | KeyboardEvent): void;
}

// -- settings ------------------------------------------------------------------------------------------

class TextLike<E extends HTMLInputElement | HTMLTextAreaElement> {
  private changed: ((v: string) => any) | null = null;
  constructor(readonly inputEl: E) {
    inputEl.addEventListener("input", () => this.changed?.(inputEl.value));
  }
  setValue(v: string): this {
    this.inputEl.value = v;
    return this;
  }
  getValue(): string {
    return this.inputEl.value;
  }
  setPlaceholder(p: string): this {
    this.inputEl.placeholder = p;
    return this;
  }
  onChange(fn: (v: string) => any): this {
    this.changed = fn;
    return this;
  }
}

class ButtonComponent {
  constructor(readonly buttonEl: HTMLButtonElement) {}
  setButtonText(t: string): this {
    this.buttonEl.textContent = t;
    return this;
  }
  setCta(): this {
    this.buttonEl.classList.add("mod-cta");
    return this;
  }
  onClick(fn: (evt: MouseEvent) => any): this {
    this.buttonEl.addEventListener("click", fn);
    return this;
  }
}

export class Setting {
  settingEl: HTMLElement;
  private infoEl: HTMLElement;
  private controlEl: HTMLElement;
  constructor(containerEl: HTMLElement) {
    this.settingEl = (containerEl as any).createDiv({ cls: "setting-item" });
    this.infoEl = (this.settingEl as any).createDiv({ cls: "setting-item-info" });
    this.controlEl = (this.settingEl as any).createDiv({ cls: "setting-item-control" });
  }
  setName(n: string): this {
    (this.infoEl as any).createDiv({ cls: "setting-item-name", text: n });
    return this;
  }
  setDesc(d: string): this {
    (this.infoEl as any).createDiv({ cls: "setting-item-description", text: d });
    return this;
  }
  addText(cb: (t: TextLike<HTMLInputElement>) => any): this {
    cb(new TextLike((this.controlEl as any).createEl("input", { type: "text" })));
    return this;
  }
  addTextArea(cb: (t: TextLike<HTMLTextAreaElement>) => any): this {
    cb(new TextLike((this.controlEl as any).createEl("textarea")));
    return this;
  }
  addButton(cb: (b: ButtonComponent) => any): this {
    cb(new ButtonComponent((this.controlEl as any).createEl("button")));
    return this;
  }
}

export abstract class PluginSettingTab {
  containerEl: HTMLElement;
  constructor(
    readonly app: App,
    readonly plugin: Plugin,
  ) {
    this.containerEl = ((globalThis as any).document as Document).createElement("div");
  }
  abstract display(): void;
  hide(): void {}
}

// -- the plugin ------------------------------------------------------------------------------------------

export interface PluginManifest {
  id: string;
  name: string;
  version: string;
  minAppVersion: string;
}

export class Plugin {
  private cleanups: (() => void)[] = [];
  /** stand-in: what the plugin registered. */
  commands = new Map<string, { id: string; name: string; callback?: () => any }>();
  ribbon: HTMLElement[] = [];
  statusBar: HTMLElement[] = [];
  settingTabs: PluginSettingTab[] = [];
  data: unknown = null;
  saved = 0;
  static statusBarEl: HTMLElement | null = null;
  static ribbonEl: HTMLElement | null = null;

  constructor(
    readonly app: App,
    readonly manifest: PluginManifest,
  ) {}
  onload(): void | Promise<void> {}
  onunload(): void {}
  /** stand-in: what Obsidian does to enable a plugin. */
  async load(): Promise<void> {
    await this.onload();
  }
  /** stand-in: what Obsidian does to disable it. */
  unload(): void {
    this.cleanups.splice(0).forEach((c) => c());
    this.onunload();
  }
  async loadData(): Promise<unknown> {
    return this.data;
  }
  async saveData(d: unknown): Promise<void> {
    this.data = JSON.parse(JSON.stringify(d));
    this.saved++;
  }
  register(cb: () => any): void {
    this.cleanups.push(cb);
  }
  registerEvent(ref: EventRef): void {
    this.cleanups.push(() => ref.e.offref(ref));
  }
  registerView(type: string, factory: (leaf: WorkspaceLeaf) => View): void {
    this.app.workspace.viewFactories.set(type, factory);
  }
  addCommand(c: { id: string; name: string; callback?: () => any }): typeof c {
    this.commands.set(c.id, c);
    return c;
  }
  addRibbonIcon(icon: string, title: string, cb: (evt: MouseEvent) => any): HTMLElement {
    const doc = (globalThis as any).document as Document;
    const el = doc.createElement("div");
    el.className = "side-dock-ribbon-action clickable-icon";
    el.setAttribute("aria-label", title);
    setIcon(el, icon);
    el.addEventListener("click", cb);
    Plugin.ribbonEl?.appendChild(el);
    this.ribbon.push(el);
    return el;
  }
  addStatusBarItem(): HTMLElement {
    const doc = (globalThis as any).document as Document;
    const el = doc.createElement("div");
    el.className = "status-bar-item";
    Plugin.statusBarEl?.appendChild(el);
    this.statusBar.push(el);
    return el;
  }
  addSettingTab(tab: PluginSettingTab): void {
    this.settingTabs.push(tab);
  }
}
