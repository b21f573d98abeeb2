#!/usr/bin/env node
// Conformance of cua-host to the reference driver's published tool contract (0.7.0).
//
// A real MCP client cua-host did not write — the MCP TypeScript SDK — starts `cua-host run`
// over stdio and calls every contract tool with inputs valid under the contract's own
// input_schema (testdata/cua-driver-contract/manifest.json, copied unchanged from the
// reference). Every result is checked:
//
//   - a valid input is never refused with invalid_arguments;
//   - a successful result's structuredContent validates (ajv) against the tool's
//     success_output_schema;
//   - every result goes through the SDK's own callTool, which validates structuredContent
//     (refusals and errors too) against the outputSchema cua-host declares in tools/list,
//     and every result's structuredContent is validated with ajv against it here as well;
//     a tool with structured results declares one, and no listed schema uses "const";
//   - every listed tool, contract or not, is driven into a refusal (refusalSweep) that the
//     SDK hands back as a result with structuredContent.status "refused" and the expected
//     code;
//   - _meta["cua-host/outcome"] is on every result and is completed, not_started or unknown
//     (completed for a success, not_started for a refusal); _meta["cua-host/details"], when
//     present, is an object;
//   - a refusal has the shape of tool-refusal.json;
//   - the effect happened, seen by an oracle outside cua-host: xdotool and xwininfo reading
//     the X server, the file a terminal writes, the events test/xevlog logs, the PNG file a
//     screenshot was written to, the clipboard read back with xclip.
//
// Pass one runs unrestricted on a private display (no consent can get in the way); pass two
// runs in standard mode on a display the caller started (--shared-env), where the consent
// provider denies, to provoke refusals.
//
//     npm ci && node conformance.mjs --bin CUA_HOST --xevlog XEVLOG --out DIR [--shared-env FILE]
//
// It prints one line per call, then a table per tool, and writes DIR/report.json. Exit
// status 0 when nothing violated the contract.

import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { deflateSync, inflateSync } from "node:zlib";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const here = dirname(fileURLToPath(import.meta.url));
const { values: opt } = parseArgs({
  options: {
    bin: { type: "string" },
    xevlog: { type: "string" },
    out: { type: "string" },
    contract: { type: "string", default: join(here, "testdata", "cua-driver-contract") },
    "shared-env": { type: "string" },
  },
});
if (!opt.bin || !opt.xevlog || !opt.out) {
  console.error("usage: node conformance.mjs --bin CUA_HOST --xevlog XEVLOG --out DIR [--shared-env FILE] [--contract DIR]");
  process.exit(2);
}
mkdirSync(opt.out, { recursive: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (s) => console.log(s);

// NOT_ON_LINUX lists the contract tools cua-host cannot provide on Linux, with the reason.
// Such a tool must be absent from tools/list, or refused with the stable code given here.
const NOT_ON_LINUX = {
  // (none: every tool of contract 0.7.0 is implemented on Linux)
};

// KNOWN_LIMITS are inputs valid under the contract that cua-host refuses on Linux on
// purpose, with a stable code other than invalid_arguments. A refusal that matches one is
// reported as a note, not a violation.
const KNOWN_LIMITS = [
  // { tool, when: (args) => bool, code, reason }
  ...["click", "move_cursor", "drag", "scroll"].map((tool) => ({
    tool,
    code: "desktop_coordinate_scope_required",
    when: (args) => (args.target === undefined || args.target === null) && args.scope === undefined,
    reason: "x/y with no target are desktop coordinates only when the caller says so (scope \"desktop\" or a desktop target), as the reference's Linux driver requires",
  })),
];

// ---------------------------------------------------------------------------------------
// The contract and the validators.

const manifest = JSON.parse(readFileSync(join(opt.contract, "manifest.json"), "utf8"));
const refusalExample = JSON.parse(readFileSync(join(opt.contract, "tool-refusal.json"), "utf8")).result;
const contract = new Map(manifest.tools.map((t) => [t.name, t]));

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
// The contract's numeric formats (from Rust's schemars). Registered so that they are
// checked rather than silently ignored.
const U32 = 2 ** 32 - 1;
ajv.addFormat("uint32", { type: "number", validate: (n) => Number.isInteger(n) && n >= 0 && n <= U32 });
ajv.addFormat("uint64", { type: "number", validate: (n) => Number.isInteger(n) && n >= 0 });
ajv.addFormat("double", { type: "number", validate: (n) => Number.isFinite(n) });

/** formatsIn lists every "format" a schema uses. */
function formatsIn(schema, acc = new Set()) {
  if (Array.isArray(schema)) schema.forEach((s) => formatsIn(s, acc));
  else if (schema && typeof schema === "object") {
    for (const [k, v] of Object.entries(schema)) {
      if (k === "format" && typeof v === "string") acc.add(v);
      else formatsIn(v, acc);
    }
  }
  return acc;
}
for (const f of formatsIn(manifest.tools)) {
  if (!ajv.formats[f]) throw new Error(`the contract uses format ${f}, which no validator checks`);
}

const inputValidators = new Map();
const outputValidators = new Map();
for (const t of manifest.tools) {
  inputValidators.set(t.name, ajv.compile(t.input_schema));
  outputValidators.set(t.name, ajv.compile(t.success_output_schema));
}

/** shapeSchema turns tool-refusal.json's structuredContent into a closed schema: the same
 * keys, the same types, and the same value for "status". */
function shapeSchema(v, key) {
  if (Array.isArray(v)) return { type: "array" };
  if (v === null) return { type: "null" };
  if (typeof v === "object") {
    const properties = {};
    for (const [k, x] of Object.entries(v)) properties[k] = shapeSchema(x, k);
    return { type: "object", properties, required: Object.keys(v), additionalProperties: false };
  }
  if (key === "status") return { const: v };
  if (typeof v === "string") return { type: "string", minLength: 1 };
  return { type: typeof v };
}
const refusalValidator = ajv.compile(shapeSchema(refusalExample.structuredContent));

// cua-host's own manifest (`cua-host manifest`): per tool, the success_output_schema and the
// error_output_schema it publishes. Every result of the run is validated against the one
// that applies, so the published manifest is held to what the tools return.
const ownManifest = JSON.parse(execFileSync(opt.bin, ["manifest"], { encoding: "utf8", maxBuffer: 64 << 20 }));
const ownSuccess = new Map();
const ownError = new Map();
for (const t of ownManifest.tools) {
  if (t.success_output_schema) ownSuccess.set(t.name, ajv.compile(t.success_output_schema));
  ownError.set(t.name, ajv.compile(t.error_output_schema));
}
/** toolContractVersion is what get_config reported (checked against the manifests). */
let toolContractVersion = null;
const OUTCOMES = new Set(["completed", "not_started", "unknown"]);

/** usesConst reports whether a schema uses the "const" keyword anywhere (data under enum,
 * default and examples aside). */
function usesConst(schema) {
  if (Array.isArray(schema)) return schema.some(usesConst);
  if (!schema || typeof schema !== "object") return false;
  return Object.entries(schema).some(([k, v]) => {
    if (k === "const") return true;
    if (k === "enum" || k === "default" || k === "examples") return false;
    if (k === "properties" || k === "patternProperties" || k === "$defs" || k === "definitions") return Object.values(v ?? {}).some(usesConst);
    return usesConst(v);
  });
}

const errText = (v) => ajv.errorsText(v.errors, { separator: "; ", dataVar: "structuredContent" });

// ---------------------------------------------------------------------------------------
// Results per tool.

class Stats {
  constructor(name) {
    this.name = name;
    this.calls = 0;
    this.successes = 0;
    this.schemaValid = 0;
    this.refused = 0;
    this.oracleChecks = 0;
    this.ownValid = 0;
    this.oracleOK = 0;
    this.notes = [];
    this.violations = [];
  }
}
const stats = new Map();
const st = (name) => {
  if (!stats.has(name)) stats.set(name, new Stats(name));
  return stats.get(name);
};
for (const name of contract.keys()) st(name);
const violations = [];

// KINDS sorts violations for the summary: the first pattern that matches names the kind.
const KINDS = [
  [/Structured content does not match|advertised outputSchema|declares no outputSchema|uses const/, "own outputSchema"],
  [/no refusal case/, "refusal sweep"],
  [/not in tools\/list/, "not listed"],
  [/never called/, "not called"],
  [/JSON-RPC error/, "protocol error"],
  [/_meta\["cua-host\/outcome"\]|with outcome/, "_meta outcome"],
  [/_meta\["cua-host\/details"\]/, "_meta details"],
  [/tool-refusal\.json|refusal has no text/, "refusal shape"],
  [/refused with invalid_arguments/, "valid input refused (invalid_arguments)"],
  [/success_output_schema|without structuredContent/, "output schema"],
  [/declared outputSchema/, "own outputSchema"],
  [/oracle:/, "effect not confirmed"],
  [/want a refusal|want window_target_not_found|want session_ended|want authorization|, want /, "wrong refusal"],
  [/refused /, "refused"],
];
const kindCounts = (list) => {
  const out = {};
  for (const v of list) out[kindOf(v)] = (out[kindOf(v)] ?? 0) + 1;
  return out;
};
const kindOf = (what) => (KINDS.find(([re]) => re.test(what)) ?? [null, "other"])[1];

function violate(tool, what) {
  violations.push({ tool, what, kind: kindOf(what) });
  st(tool).violations.push(what);
  log(`  ✗ ${tool}: ${what}`);
}
function note(tool, what) {
  const s = st(tool);
  if (!s.notes.includes(what)) s.notes.push(what);
}

/** oracle records one effect check of tool: ok or the reason it failed. */
function oracle(tool, ok, what) {
  const s = st(tool);
  s.oracleChecks++;
  if (ok) {
    s.oracleOK++;
    log(`    ✓ oracle: ${what}`);
  } else {
    violate(tool, `oracle: ${what}`);
  }
  return ok;
}

// ---------------------------------------------------------------------------------------
// The X server, read by programs outside cua-host.

class Desk {
  constructor(env) {
    this.env = env; // full environment for X clients on this display
    this.children = [];
  }
  run(prog, args, opts = {}) {
    return execFileSync(prog, args, { env: this.env, encoding: "utf8", timeout: 15000, stdio: ["pipe", "pipe", "pipe"], ...opts });
  }
  tryRun(prog, args, opts) {
    try {
      return this.run(prog, args, opts);
    } catch {
      return null;
    }
  }
  pointer() {
    const out = this.run("xdotool", ["getmouselocation", "--shell"]);
    const m = Object.fromEntries(out.trim().split("\n").map((l) => l.split("=")));
    return { x: Number(m.X), y: Number(m.Y) };
  }
  screen() {
    const [w, h] = this.run("xdotool", ["getdisplaygeometry"]).trim().split(/\s+/).map(Number);
    return { width: w, height: h };
  }
  /** geometry of a client window: absolute position of its top-left corner and its size. */
  geometry(win) {
    const out = this.tryRun("xwininfo", ["-id", String(win)]);
    if (out === null) return null;
    const num = (re) => Number(out.match(re)?.[1]);
    return {
      x: num(/Absolute upper-left X:\s+(-?\d+)/),
      y: num(/Absolute upper-left Y:\s+(-?\d+)/),
      width: num(/Width:\s+(\d+)/),
      height: num(/Height:\s+(\d+)/),
      mapped: /Map State:\s+IsViewable/.test(out),
    };
  }
  /** frameExtents is _NET_FRAME_EXTENTS (left, right, top, bottom) or zeros. */
  frameExtents(win) {
    const out = this.tryRun("xprop", ["-id", String(win), "_NET_FRAME_EXTENTS"]) ?? "";
    const m = out.match(/=\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+)/);
    return m ? { left: +m[1], right: +m[2], top: +m[3], bottom: +m[4] } : { left: 0, right: 0, top: 0, bottom: 0 };
  }
  focus(win) {
    this.tryRun("xdotool", ["windowactivate", "--sync", String(win)]);
    this.tryRun("xdotool", ["windowfocus", "--sync", String(win)]);
  }
  focused() {
    return Number(this.tryRun("xdotool", ["getwindowfocus"])?.trim());
  }
  clipboardSet(text) {
    // xclip forks a child that serves the selection until another owner takes it; only its
    // stdin is a pipe, so the call returns when the parent exits.
    execFileSync("xclip", ["-selection", "clipboard", "-i"], { env: this.env, input: text, stdio: ["pipe", "ignore", "ignore"], timeout: 10000 });
  }
  clipboardGet(target) {
    const args = ["-selection", "clipboard", "-o"];
    if (target) args.push("-t", target);
    return this.tryRun("xclip", args, { timeout: 5000 });
  }
  /** spawn starts an X client on this display; it is killed at the end. */
  spawn(prog, args, extraEnv = {}) {
    const child = spawn(prog, args, { env: { ...this.env, ...extraEnv }, stdio: ["ignore", "ignore", "pipe"], detached: true });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-2000)));
    child.stderrTail = () => stderr;
    this.children.push(child);
    return child;
  }
  /** windowOf waits for a visible window of pid (optionally with a title) and returns its id. */
  async windowOf(pid, name, limit = 20000) {
    const deadline = Date.now() + limit;
    while (Date.now() < deadline) {
      const args = ["search", "--onlyvisible", "--pid", String(pid)];
      if (name) args.push("--name", name);
      const out = this.tryRun("xdotool", args);
      const ids = (out ?? "").trim().split("\n").filter(Boolean).map(Number);
      if (ids.length) return ids[ids.length - 1];
      await sleep(100);
    }
    return 0;
  }
  windowsOf(pid) {
    const out = this.tryRun("xdotool", ["search", "--onlyvisible", "--pid", String(pid)]);
    return (out ?? "").trim().split("\n").filter(Boolean).map(Number);
  }
  killAll() {
    for (const c of this.children) {
      try {
        process.kill(-c.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}

/** Xevlog is a test/xevlog window and the events it logged. */
class Xevlog {
  constructor(desk, title, width, height, color) {
    this.file = join(opt.out, `${title}.jsonl`);
    this.proc = desk.spawn(opt.xevlog, ["-title", title, "-width", String(width), "-height", String(height), "-color", color, "-out", this.file]);
    this.desk = desk;
    this.color = color;
  }
  async ready(limit = 15000) {
    const deadline = Date.now() + limit;
    while (Date.now() < deadline) {
      const ready = this.events().find((e) => e.type === "ready");
      if (ready) {
        this.win = ready.window;
        this.pid = ready.pid;
        // wait for the window manager to map and place it
        for (let i = 0; i < 50 && !this.desk.geometry(this.win)?.mapped; i++) await sleep(100);
        await sleep(200);
        return;
      }
      await sleep(50);
    }
    throw new Error(`xevlog ${this.file} not ready: ${this.proc.stderrTail()}`);
  }
  events() {
    if (!existsSync(this.file)) return [];
    return readFileSync(this.file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  }
  mark() {
    return this.events().length;
  }
  /** waitFor waits until pred holds for the events logged since mark, and returns them. */
  async waitFor(mark, pred, limit = 3000) {
    const deadline = Date.now() + limit;
    let evs = [];
    for (;;) {
      evs = this.events().slice(mark);
      if (pred(evs) || Date.now() > deadline) return evs;
      await sleep(50);
    }
  }
  target() {
    return { kind: "window", pid: this.pid, window_id: this.win };
  }
}

const SHIFT = 1, CONTROL = 4, MOD1 = 8;
const presses = (evs, button) => evs.filter((e) => e.type === "button_press" && (button === undefined || e.button === button));
const keyPresses = (evs) => evs.filter((e) => e.type === "key_press");
const summarize = (evs) => JSON.stringify(evs.filter((e) => e.type !== "motion").map((e) => ({ t: e.type, b: e.button, x: e.x, y: e.y, k: e.char || e.keysym, s: e.state }))).slice(0, 400);

// ---------------------------------------------------------------------------------------
// PNG: the header, and the pixels of 8-bit RGB/RGBA images (what a capture writes).

function pngHeader(buf) {
  const sig = "89504e470d0a1a0a";
  if (buf.length < 33 || buf.subarray(0, 8).toString("hex") !== sig || buf.subarray(12, 16).toString() !== "IHDR") return null;
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20), depth: buf[24], colorType: buf[25], interlace: buf[28] };
}

function pngDecode(buf) {
  const h = pngHeader(buf);
  if (!h || h.depth !== 8 || h.interlace !== 0 || (h.colorType !== 2 && h.colorType !== 6)) return null;
  const bpp = h.colorType === 6 ? 4 : 3;
  const idat = [];
  for (let off = 8; off < buf.length; ) {
    const len = buf.readUInt32BE(off);
    const type = buf.subarray(off + 4, off + 8).toString();
    if (type === "IDAT") idat.push(buf.subarray(off + 8, off + 8 + len));
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = h.width * bpp;
  const px = Buffer.alloc(stride * h.height);
  for (let y = 0; y < h.height; y++) {
    const f = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? px[y * stride + i - bpp] : 0;
      const b = y > 0 ? px[(y - 1) * stride + i] : 0;
      const c = i >= bpp && y > 0 ? px[(y - 1) * stride + i - bpp] : 0;
      let v = line[i];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[y * stride + i] = v & 0xff;
    }
  }
  return { ...h, pixel: (x, y) => px.subarray(y * stride + x * bpp, y * stride + x * bpp + 3).toString("hex") };
}

// ---------------------------------------------------------------------------------------
// The MCP client side.

/** descendants lists the processes below pid, from /proc. */
function descendants(pid) {
  const kids = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch {
      // gone
    }
  }
  const out = [];
  const walk = (p) => (kids.get(p) ?? []).forEach((k) => (out.push(k), walk(k)));
  walk(pid);
  return out;
}

function environOf(pid) {
  const env = {};
  for (const kv of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
    const i = kv.indexOf("=");
    if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return env;
}

/** Run is one `cua-host run` and the SDK client connected to it. */
class Run {
  constructor(label, args, env) {
    this.label = label;
    this.logFile = join(opt.out, `run-${label}.log`);
    this.transport = new StdioClientTransport({
      command: opt.bin,
      args: ["run", "--log-file", this.logFile, "--log-level", "debug", ...args],
      env,
      stderr: "pipe",
    });
    this.stderr = "";
    this.client = new Client({ name: "cua-conformance", version: "1.0.0" });
  }
  async start() {
    await this.client.connect(this.transport);
    this.transport.stderr?.on("data", (d) => (this.stderr = (this.stderr + d).slice(-4000)));
    const listed = await this.client.listTools(); // also caches the SDK's output validators
    this.tools = new Map(listed.tools.map((t) => [t.name, t]));
    this.outputValidators = new Map();
    for (const t of listed.tools) {
      for (const [what, schema] of [["inputSchema", t.inputSchema], ["outputSchema", t.outputSchema]]) {
        if (schema && usesConst(schema)) violate(t.name, `the advertised ${what} uses const (some clients reject it): ${JSON.stringify(schema).slice(0, 160)}`);
      }
      if (!t.outputSchema) continue;
      if (t.outputSchema.type !== "object") violate(t.name, `the advertised outputSchema's root type is ${JSON.stringify(t.outputSchema.type)}, want object`);
      this.outputValidators.set(t.name, ajv.compile(t.outputSchema));
    }
    log(`[${this.label}] tools/list: ${listed.tools.length} tools`);
    const inManifest = new Set(ownManifest.tools.map((t) => t.name));
    for (const t of listed.tools) if (!inManifest.has(t.name)) violate(t.name, "listed by tools/list but not described by `cua-host manifest`");
    for (const name of inManifest) if (!this.tools.has(name)) violate(name, "described by `cua-host manifest` but not listed by tools/list");
  }
  /** workerEnv is the environment the host gave its worker: the display's DISPLAY,
   * XAUTHORITY and session bus. */
  workerEnv() {
    for (const pid of descendants(this.transport.pid)) {
      let cmd = "";
      try {
        cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      } catch {
        continue;
      }
      if (cmd.includes("__worker")) return environOf(pid);
    }
    throw new Error(`no worker process below cua-host run (pid ${this.transport.pid})`);
  }
  async close() {
    await this.client.close().catch(() => {});
  }

  /**
   * call calls tool with args and checks the result against the contract. expect is
   * "success" (a refusal is a violation), "refusal" (a success is a violation) or "any".
   * It returns {res, sc, meta, refused, code, ok}.
   */
  async call(tool, args, { expect = "success", what = "", refusalCodes, invalidInput = false } = {}) {
    const s = st(tool);
    s.calls++;
    const tag = `${tool}${what ? ` (${what})` : ""}`;
    const inContract = contract.has(tool);
    if (inContract && !invalidInput && !inputValidators.get(tool)(args)) {
      // The harness's own input must be valid, or the check means nothing.
      throw new Error(`harness bug: input for ${tag} is invalid under the contract: ${ajv.errorsText(inputValidators.get(tool).errors)} ${JSON.stringify(args)}`);
    }
    let res;
    try {
      // The SDK's plain callTool, with its default result schema: it validates
      // structuredContent against the tool's advertised outputSchema, as agent hosts do.
      res = await this.client.callTool({ name: tool, arguments: args }, undefined, { timeout: 90000 });
    } catch (e) {
      violate(tool, `${what || "call"}: JSON-RPC error ${e.code ?? ""} ${e.message}`);
      log(`  ${this.label} ${tag}: JSON-RPC error: ${e.message}`);
      return { ok: false, res: null, sc: {}, meta: {} };
    }
    const sc = res.structuredContent ?? {};
    const meta = res._meta ?? {};
    const outcome = meta["cua-host/outcome"];
    const refused = res.isError === true;
    const code = sc?.refusal?.code;
    const textOf = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join(" ").slice(0, 200);
    log(`  ${this.label} ${tag} ${JSON.stringify(args).slice(0, 160)} → ${refused ? `REFUSED ${code ?? "(no code)"}: ${sc?.refusal?.message ?? textOf}` : JSON.stringify(sc).slice(0, 240)} [outcome ${outcome}]`);

    if (!OUTCOMES.has(outcome)) violate(tool, `${what || "call"}: _meta["cua-host/outcome"] is ${JSON.stringify(outcome)}, want completed | not_started | unknown`);
    const details = meta["cua-host/details"];
    if (details !== undefined && (details === null || typeof details !== "object" || Array.isArray(details))) {
      violate(tool, `${what || "call"}: _meta["cua-host/details"] is not an object: ${JSON.stringify(details).slice(0, 80)}`);
    }

    // Every result, success, refusal or error, against the outputSchema cua-host advertises.
    const own = this.outputValidators.get(tool);
    if (res.structuredContent !== undefined) {
      if (!own) violate(tool, `${what || "call"}: a result has structuredContent and the tool declares no outputSchema`);
      else if (!own(res.structuredContent)) violate(tool, `${what || "call"}: structuredContent fails the advertised outputSchema: ${errText(own)}`);
      else s.ownValid++;
    }

    // … and against the manifest cua-host publishes: error_output_schema for a refusal or a
    // tool-level error, success_output_schema for a success.
    if (res.structuredContent !== undefined) {
      const failed = refused || sc?.error_code !== undefined;
      const v = failed ? ownError.get(tool) : ownSuccess.get(tool);
      if (!v) violate(tool, `${what || "call"}: \`cua-host manifest\` has no ${failed ? "error" : "success"}_output_schema for this tool`);
      else if (!v(res.structuredContent)) violate(tool, `${what || "call"}: structuredContent fails the manifest's ${failed ? "error" : "success"}_output_schema: ${errText(v)}`);
    }
    if (tool === "get_config" && !refused) toolContractVersion = sc?.tool_contract_version ?? null;

    if (refused) {
      s.refused++;
      if (!refusalValidator(sc)) violate(tool, `${what || "call"}: refusal does not have tool-refusal.json's shape: ${errText(refusalValidator)}; got ${JSON.stringify(sc).slice(0, 200)}`);
      if (!(res.content ?? []).some((c) => c.type === "text" && c.text)) violate(tool, `${what || "call"}: refusal has no text content`);
      if (outcome !== undefined && outcome !== "not_started") violate(tool, `${what || "call"}: refusal with outcome ${outcome}, want not_started`);
      const limit = KNOWN_LIMITS.find((l) => l.tool === tool && l.code === code && l.when(args));
      if (limit) {
        note(tool, `refused ${code}: ${limit.reason}`);
        return { ok: false, res, sc, meta, refused, code, limit: true };
      }
      if (code === "invalid_arguments" && inContract && !invalidInput) violate(tool, `${what || "call"}: a contract-valid input was refused with invalid_arguments: ${sc?.refusal?.message ?? textOf}`);
      else if (expect === "success") violate(tool, `${what || "call"}: refused ${code ?? "(no code)"}: ${sc?.refusal?.message ?? textOf}`);
      if (expect === "refusal" && refusalCodes && !refusalCodes.includes(code)) violate(tool, `${what || "call"}: refused with ${code}, want ${refusalCodes.join(" or ")}`);
      return { ok: false, res, sc, meta, refused, code };
    }

    s.successes++;
    if (expect === "refusal") violate(tool, `${what || "call"}: succeeded, want a refusal (${(refusalCodes ?? []).join(" or ")})`);
    if (outcome !== undefined && outcome !== "completed") violate(tool, `${what || "call"}: success with outcome ${outcome}, want completed`);
    let valid = true;
    if (inContract) {
      const v = outputValidators.get(tool);
      if (res.structuredContent === undefined) {
        valid = false;
        violate(tool, `${what || "call"}: success without structuredContent`);
      } else if (!v(res.structuredContent)) {
        valid = false;
        violate(tool, `${what || "call"}: structuredContent fails success_output_schema: ${errText(v)}`);
      }
    }
    if (own && !own(res.structuredContent)) valid = false;
    if (inContract && valid) s.schemaValid++;
    return { ok: valid, done: true, res, sc, meta, refused, code };
  }
}

// ---------------------------------------------------------------------------------------
// Pass one: unrestricted, on a private display.

const near = (a, b, tol = 1) => Math.abs(a - b) <= tol;
const M = "conf-main"; // the session label the calls carry

async function unrestrictedPass() {
  const run = new Run("unrestricted", ["--display", "private", "--mode", "unrestricted", "--dangerously-bypass-approvals", "--screen", "1280x800"], { ...process.env, DISPLAY: "" });
  await run.start();
  const env = run.workerEnv();
  const desk = new Desk({ ...process.env, DISPLAY: env.DISPLAY, XAUTHORITY: env.XAUTHORITY, DBUS_SESSION_BUS_ADDRESS: env.DBUS_SESSION_BUS_ADDRESS ?? "" });
  log(`[unrestricted] private display ${env.DISPLAY}`);
  try {
    checkListed(run);
    await sessions(run);
    const apps = await startApps(desk);
    await refusalSweep(run, apps);
    await screenTools(run, desk);
    await pointerTools(run, desk, apps);
    await keyboardTools(run, desk, apps);
    await clipboardTools(run, desk);
    await captureTools(run, desk, apps);
    await windowTools(run, desk, apps);
    await menuTools(run, desk, apps);
    await cursorTools(run, desk);
    await otherTools(run, desk, apps);
    await refusals(run, desk, apps);
    await endSessions(run);
  } finally {
    desk.killAll();
    await run.close();
  }
}

/** checkListed: every contract tool is in tools/list, or is listed in NOT_ON_LINUX. */
function checkListed(run) {
  for (const name of contract.keys()) {
    const listed = run.tools.has(name);
    st(name).listed = listed;
    if (NOT_ON_LINUX[name]) {
      note(name, `not on Linux: ${NOT_ON_LINUX[name].reason}`);
      if (listed) violate(name, `listed in tools/list although the test declares it not available on Linux`);
    } else if (!listed) {
      violate(name, "not in tools/list");
    }
  }
}

async function startApps(desk) {
  const ev = new Xevlog(desk, "conf-input", 400, 300, "ff0000");
  const frame = new Xevlog(desk, "conf-frame", 300, 200, "0000ff");
  await ev.ready();
  await frame.ready();
  const termFile = join(opt.out, "terminal.txt");
  writeFileSync(termFile, "");
  const term = desk.spawn("xterm", ["-title", "conf-term", "-geometry", "60x8+700+420", "-e", "sh", "-c", `stty -echo; exec cat > '${termFile}'`]);
  const termWin = await desk.windowOf(term.pid, "conf-term");
  if (!termWin) throw new Error(`xterm did not map a window: ${term.stderrTail()}`);
  log(`  apps: xevlog conf-input ${ev.win} (pid ${ev.pid}), conf-frame ${frame.win}, xterm ${termWin} (pid ${term.pid})`);
  await sleep(500); // the shell starts cat
  return { ev, frame, term: { pid: term.pid, win: termWin, file: termFile, target: { kind: "window", pid: term.pid, window_id: termWin } } };
}

async function sessions(run) {
  let r = await run.call("start_session", { session: M, capture_scope: "window" }, { what: "labelled, capture_scope" });
  if (r.ok) oracle("start_session", r.sc.session === M && r.sc.active === true && r.sc.capture_scope === "window", `session ${M} active with capture_scope window (${r.sc.session}, ${r.sc.active}, ${r.sc.capture_scope})`);
  r = await run.call("start_session", { session: M }, { what: "same label again (idempotent)" });
  if (r.ok) oracle("start_session", r.sc.session === M && r.sc.active === true, `starting ${M} again returns it`);
  r = await run.call("start_session", { session: "conf-b", cursor_theme: { theme_id: "default", reduced_motion: "on" } }, { what: "cursor_theme" });
  r = await run.call("start_session", {}, { what: "implicit" });

  r = await run.call("get_session", { session: M }, { what: "labelled" });
  if (r.ok) oracle("get_session", r.sc.session === M && r.sc.state === "active", `get_session names ${M}, active`);
  r = await run.call("get_session", {}, { what: "implicit" });
  if (r.ok) oracle("get_session", r.sc.state === "active", "the implicit session is active");

  r = await run.call("get_session_state", { session: M }, { what: "labelled" });
  if (r.ok) oracle("get_session_state", r.sc.session === M && r.sc.capture_scope === "window", `capture_scope of ${M} is what start_session set`);
  r = await run.call("get_session_state", {}, { what: "implicit" });
  // get_session_state's input schema is open (additionalProperties: true): a key the
  // contract does not name is valid input.
  r = await run.call("get_session_state", { session: M, conformance_probe: true }, { what: "a key the open schema allows" });

  r = await run.call("list_sessions", {}, { what: "default" });
  if (r.ok) {
    const names = (r.sc.sessions ?? []).map((x) => x.session);
    oracle("list_sessions", names.includes(M) && names.includes("conf-b"), `lists ${M} and conf-b (${names.join(", ")})`);
  }
  r = await run.call("list_sessions", { limit: 1 }, { what: "limit 1" });
  if (r.ok) oracle("list_sessions", (r.sc.sessions ?? []).length <= 1, `limit 1 returns at most one (${(r.sc.sessions ?? []).length})`);

  r = await run.call("escalate_session", { session: "conf-b", reason: "no_window_target", detail: "conformance" }, { what: "reason and detail" });
  if (r.ok) oracle("escalate_session", r.sc.escalation_reason === "no_window_target" && r.sc.escalation_detail === "conformance", "the escalation is recorded with its reason and detail");
  r = await run.call("get_session_state", { session: "conf-b" }, { what: "after escalation" });
  if (r.ok) oracle("get_session_state", r.sc.escalation_reason === "no_window_target", "get_session_state shows the escalation");

  r = await run.call("end_session", { session: "conf-b" }, { what: "labelled" });
  if (r.ok) oracle("end_session", r.sc.session === "conf-b" && r.sc.active === false, "conf-b ended");
  r = await run.call("list_sessions", {}, { what: "after end" });
  if (r.ok) {
    const b = (r.sc.sessions ?? []).find((x) => x.session === "conf-b");
    oracle("list_sessions", !b || b.state === "ending", `conf-b is no longer active (${JSON.stringify(b ?? null)})`);
  }
  r = await run.call("get_session", { session: "conf-b" }, { what: "ended label", expect: "any" });
  if (!r.refused && r.ok) oracle("get_session", r.sc.state !== "active", `an ended session is not reported active (${r.sc.state})`);
}

async function screenTools(run, desk) {
  const scr = desk.screen();
  for (const [args, what] of [[{}, "no session"], [{ session: M }, "labelled"]]) {
    const r = await run.call("get_screen_size", args, { what });
    if (r.done) oracle("get_screen_size", r.sc.width === scr.width && r.sc.height === scr.height, `${r.sc.width}x${r.sc.height} = xdotool getdisplaygeometry ${scr.width}x${scr.height}`);
  }
  for (const [x, y, args] of [[123, 234, {}], [640, 400, { session: M }]]) {
    desk.run("xdotool", ["mousemove", "--sync", String(x), String(y)]);
    const r = await run.call("get_cursor_position", args, { what: args.session ? "labelled" : "" });
    if (r.done) oracle("get_cursor_position", r.sc.x === x && r.sc.y === y, `(${r.sc.x},${r.sc.y}) = where xdotool put the pointer (${x},${y})`);
  }
}

async function pointerTools(run, desk, { ev }) {
  const g = desk.geometry(ev.win);
  const desktop = { kind: "desktop", display_id: "primary" };

  // move_cursor: the target object (desktop and window), the flat scope, target null.
  for (const [args, want, what] of [
    [{ x: 100, y: 120, target: desktop }, { x: 100, y: 120 }, "target desktop"],
    [{ x: 200, y: 220, scope: "desktop", session: M }, { x: 200, y: 220 }, "scope desktop, labelled"],
    [{ x: 50, y: 60, target: ev.target() }, { x: g.x + 50, y: g.y + 60 }, "target window"],
  ]) {
    const mark = ev.mark();
    const r = await run.call("move_cursor", args, { what });
    if (!r.done) continue;
    const p = desk.pointer();
    oracle("move_cursor", p.x === want.x && p.y === want.y, `${what}: pointer at (${p.x},${p.y}), want (${want.x},${want.y})`);
    if (args.target?.kind === "window") {
      const evs = await ev.waitFor(mark, (e) => e.some((m) => m.type === "motion" && m.x === 50 && m.y === 60));
      oracle("move_cursor", evs.some((m) => m.type === "motion" && m.x === 50 && m.y === 60), "xevlog saw motion to window (50,60)");
    }
  }
  {
    const before = desk.pointer();
    const r = await run.call("move_cursor", { x: 300, y: 310, target: null }, { what: "target null" });
    const p = desk.pointer();
    if (r.done) {
      note("move_cursor", `target null moved the pointer to (${p.x},${p.y}) for (300,310)`);
    } else {
      oracle("move_cursor", r.code === "desktop_coordinate_scope_required" && p.x === before.x && p.y === before.y,
        `target null: refused ${r.code}, pointer (${p.x},${p.y}) unchanged from (${before.x},${before.y})`);
    }
  }

  // click
  const clicks = [
    [{ x: 40, y: 50, target: ev.target() }, 1, 1, 40, 50, "target window"],
    [{ x: 60, y: 70, target: ev.target(), button: "right", session: M }, 3, 1, 60, 70, "right button, labelled"],
    [{ x: 80, y: 90, target: ev.target(), count: 2 }, 1, 2, 80, 90, "count 2"],
    [{ x: g.x + 100, y: g.y + 100, target: desktop, button: "middle" }, 2, 1, 100, 100, "target desktop, middle"],
    [{ x: g.x + 120, y: g.y + 40, scope: "desktop" }, 1, 1, 120, 40, "scope desktop"],
    [{ x: 30, y: 30, target: ev.target(), count: 3 }, 1, 3, 30, 30, "count 3"],
  ];
  for (const [args, button, count, x, y, what] of clicks) {
    const mark = ev.mark();
    const r = await run.call("click", args, { what });
    if (!r.done) continue;
    const evs = await ev.waitFor(mark, (e) => presses(e, button).length >= count && e.filter((m) => m.type === "button_release").length >= count);
    const got = presses(evs, button);
    oracle("click", got.length === count && got.every((e) => e.x === x && e.y === y) && presses(evs).length === count, `${what}: xevlog saw ${count} press(es) of button ${button} at (${x},${y}): ${summarize(evs)}`);
    await sleep(400); // keep separate clicks from merging into a multi-click
  }

  // drag
  const drags = [
    [{ from_x: 20, from_y: 20, to_x: 200, to_y: 150, target: ev.target(), steps: 5, duration_ms: 100 }, 1, 0, "target window, steps, duration"],
    [{ from_x: g.x + 210, from_y: g.y + 30, to_x: g.x + 300, to_y: g.y + 200, scope: "desktop", modifier: ["shift"], button: "left", session: M }, 1, SHIFT, "scope desktop, modifier shift"],
    [{ from_x: g.x + 50, from_y: g.y + 250, to_x: g.x + 150, to_y: g.y + 260, target: desktop, button: "middle" }, 2, 0, "target desktop, middle"],
  ];
  for (const [args, button, mods, what] of drags) {
    const mark = ev.mark();
    const r = await run.call("drag", args, { what });
    if (!r.done) continue;
    const rel = args.target?.kind === "window" ? { fx: args.from_x, fy: args.from_y, tx: args.to_x, ty: args.to_y } : { fx: args.from_x - g.x, fy: args.from_y - g.y, tx: args.to_x - g.x, ty: args.to_y - g.y };
    const evs = await ev.waitFor(mark, (e) => e.some((m) => m.type === "button_release"));
    const press = presses(evs, button)[0];
    const release = evs.find((m) => m.type === "button_release" && m.button === button);
    const moved = evs.filter((m) => m.type === "motion" && press && evs.indexOf(m) > evs.indexOf(press) && (!release || evs.indexOf(m) < evs.indexOf(release)));
    oracle("drag", press && release && press.x === rel.fx && press.y === rel.fy && release.x === rel.tx && release.y === rel.ty && moved.length > 0 && (press.state & mods) === mods,
      `${what}: xevlog saw button ${button} down at (${rel.fx},${rel.fy})${mods ? ` with modifier state ${mods}` : ""}, motion, up at (${rel.tx},${rel.ty}): ${summarize(evs)}`);
  }

  // scroll: X buttons 4 up, 5 down, 6 left, 7 right.
  const scrolls = [
    [{ x: 100, y: 100, direction: "down", amount: 3, target: ev.target() }, 5, 3, 100, 100, "down 3, target window"],
    [{ x: g.x + 150, y: g.y + 120, direction: "up", by: "line", scope: "desktop", session: M }, 4, 1, 150, 120, "up by line, scope desktop"],
    [{ x: g.x + 160, y: g.y + 130, direction: "left", amount: 2, target: desktop }, 6, 2, 160, 130, "left 2, target desktop"],
    [{ x: 170, y: 140, direction: "right", target: ev.target() }, 7, 1, 170, 140, "right, target window"],
    [{ x: 180, y: 150, direction: "down", by: "page", amount: 1, target: ev.target() }, 5, 1, 180, 150, "down by page"],
  ];
  for (const [args, button, min, x, y, what] of scrolls) {
    const mark = ev.mark();
    const r = await run.call("scroll", args, { what });
    if (!r.done) continue;
    // Without an amount, or by page, the contract fixes no count of wheel notches: wait for
    // as many as the result says were delivered, so none of them is left over to land in
    // the next call's events.
    const atLeast = args.by === "page" || args.amount === undefined;
    const delivered = r.sc?.delivery?.delivered_count ?? 0;
    const want = atLeast ? Math.max(min, delivered) : min;
    const evs = await ev.waitFor(mark, (e) => presses(e, button).length >= want);
    const got = presses(evs, button);
    const exact = atLeast ? got.length >= min : got.length === min;
    oracle("scroll", exact && got.every((e) => e.x === x && e.y === y) && presses(evs).length === got.length, `${what}: xevlog saw ${atLeast ? "at least " : ""}${min} wheel press(es) of button ${button} at (${x},${y}): ${summarize(evs)}`);
  }
}

async function keyboardTools(run, desk, { ev, term }) {
  // type_text into the terminal, which writes the line to a file.
  let r = await run.call("type_text", { text: "conformance ok 42", target: term.target }, { what: "target window (xterm)" });
  const r2 = await run.call("press_key", { key: "Return", target: term.target, session: M }, { what: "Return, target window (xterm), labelled" });
  if (r.done && r2.done) {
    let got = "";
    for (let i = 0; i < 100 && got !== "conformance ok 42\n"; i++) {
      got = readFileSync(term.file, "utf8");
      await sleep(100);
    }
    oracle("type_text", got === "conformance ok 42\n", `the terminal wrote ${JSON.stringify(got)}`);
    oracle("press_key", got.endsWith("\n"), "Return ended the terminal's line");
  }

  const chars = (evs) => keyPresses(evs).map((e) => e.char ?? "").join("");
  // type_text into xevlog by window target, then by the flat scope and the desktop target
  // (keys go to the focused window: xevlog is given the focus first).
  for (const [args, want, what] of [
    [{ text: "Ab1 z", target: ev.target(), session: M }, "Ab1 z", "target window (xevlog), labelled"],
    [{ text: "scope", scope: "desktop" }, "scope", "scope desktop (focused window)"],
    [{ text: "dt", target: { kind: "desktop", display_id: "primary" } }, "dt", "target desktop (focused window)"],
  ]) {
    if (!args.target || args.target.kind !== "window") desk.focus(ev.win);
    const mark = ev.mark();
    r = await run.call("type_text", args, { what });
    if (!r.done) continue;
    const evs = await ev.waitFor(mark, (e) => chars(e) === want);
    oracle("type_text", chars(evs) === want, `${what}: xevlog saw the characters ${JSON.stringify(chars(evs))}, want ${JSON.stringify(want)}`);
  }

  // press_key with modifiers, and hotkey.
  const keyCases = [
    ["press_key", { key: "a", modifiers: ["ctrl"], target: ev.target() }, "a", CONTROL, "ctrl+a, target window"],
    ["press_key", { key: "b", modifiers: ["shift"], target: ev.target() }, "B", SHIFT, "shift+b, target window"],
    ["press_key", { key: "Tab", scope: "desktop" }, 0xff09, 0, "Tab, scope desktop"],
    ["press_key", { key: "x", modifiers: ["alt", "ctrl"], target: { kind: "desktop", display_id: "primary" } }, "x", CONTROL | MOD1, "ctrl+alt+x, target desktop"],
    ["hotkey", { keys: ["ctrl", "c"], target: ev.target() }, "c", CONTROL, "ctrl+c, target window"],
    ["hotkey", { keys: ["ctrl", "shift", "z"], scope: "desktop", session: M }, "Z", CONTROL | SHIFT, "ctrl+shift+z, scope desktop, labelled"],
    ["hotkey", { keys: ["shift", "F5"], target: { kind: "desktop", display_id: "primary" } }, 0xffc2, SHIFT, "shift+F5, target desktop"],
  ];
  for (const [tool, args, key, mods, what] of keyCases) {
    if (!args.target || args.target.kind !== "window") desk.focus(ev.win);
    const mark = ev.mark();
    r = await run.call(tool, args, { what });
    if (!r.done) continue;
    const match = (e) => (typeof key === "number" ? e.keysym === key : e.char === key) && (e.state & mods) === mods;
    const evs = await ev.waitFor(mark, (e) => keyPresses(e).some(match));
    oracle(tool, keyPresses(evs).some(match), `${what}: xevlog saw ${typeof key === "number" ? `keysym 0x${key.toString(16)}` : JSON.stringify(key)} pressed with modifier state ${mods}: ${summarize(evs)}`);
  }
}

async function clipboardTools(run, desk) {
  let r = await run.call("clipboard_write", { text: "conformance clip ✓" }, { what: "text" });
  if (r.done) {
    await sleep(100);
    const got = desk.clipboardGet();
    oracle("clipboard_write", got === "conformance clip ✓", `xclip reads back ${JSON.stringify(got)}`);
  }
  const png = join(opt.out, "clip.png");
  writeFileSync(png, tinyPNG());
  r = await run.call("clipboard_write", { image_path: png, session: M }, { what: "image_path, labelled", expect: "any" });
  if (r.done) {
    const targets = desk.clipboardGet("TARGETS") ?? "";
    oracle("clipboard_write", /image\/png/.test(targets), `image_path: the clipboard offers image/png (targets: ${targets.replace(/\n/g, " ")})`);
  } else if (!r.limit && r.refused) violate("clipboard_write", `image_path refused with ${r.code} and not declared a known limit`);
  r = await run.call("clipboard_write", { file_path: png }, { what: "file_path", expect: "any" });
  if (r.done) {
    const uris = desk.clipboardGet("text/uri-list") ?? "";
    oracle("clipboard_write", uris.includes(`file://${png}`), `file_path: the clipboard offers text/uri-list ${JSON.stringify(uris.trim())}`);
  } else if (!r.limit && r.refused) violate("clipboard_write", `file_path refused with ${r.code} and not declared a known limit`);

  desk.clipboardSet("set by xclip 7");
  await sleep(200);
  r = await run.call("clipboard_read", { include_text: true }, { what: "include_text" });
  if (r.done) oracle("clipboard_read", r.sc.text === "set by xclip 7", `reads what xclip set: ${JSON.stringify(r.sc.text)}`);
  r = await run.call("clipboard_read", { session: M }, { what: "types only, labelled" });
  if (r.done) oracle("clipboard_read", r.sc.text === null && (r.sc.types ?? []).some((t) => /UTF8_STRING|text\/plain/.test(t)), `without include_text the text is withheld (${JSON.stringify(r.sc.text)}) and the types xclip offered are listed (${r.sc.types})`);
}

/** tinyPNG is a valid 4×4 opaque red RGB PNG, built here. */
function tinyPNG() {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(4, 0);
  ihdr.writeUInt32BE(4, 4);
  ihdr[8] = 8; // depth
  ihdr[9] = 2; // RGB
  const raw = Buffer.concat(Array.from({ length: 4 }, () => Buffer.from([0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0])));
  return Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

async function captureTools(run, desk, { ev }) {
  const scr = desk.screen();
  const g = desk.geometry(ev.win);
  const file = join(opt.out, "desktop.png");
  let r = await run.call("get_desktop_state", { screenshot_out_file: file, session: M }, { what: "screenshot_out_file, labelled" });
  if (r.done) {
    const buf = existsSync(file) ? readFileSync(file) : Buffer.alloc(0);
    const img = pngDecode(buf);
    const h = pngHeader(buf);
    oracle("get_desktop_state", !!h && h.width === scr.width && h.height === scr.height && (r.sc.screenshot_width === undefined || (h.width === r.sc.screenshot_width && h.height === r.sc.screenshot_height)),
      `${file} is a PNG of ${h?.width}x${h?.height}: the screen is ${scr.width}x${scr.height}, the result says ${r.sc.screenshot_width}x${r.sc.screenshot_height}`);
    oracle("get_desktop_state", r.sc.screen_width === scr.width && r.sc.screen_height === scr.height && r.sc.platform === "linux", `screen ${r.sc.screen_width}x${r.sc.screen_height} on ${r.sc.platform} = xdotool ${scr.width}x${scr.height}`);
    oracle("get_desktop_state", r.sc.screenshot_file_path === undefined || r.sc.screenshot_file_path === file, `screenshot_file_path ${r.sc.screenshot_file_path} names the file asked for`);
    if (img && h.width === scr.width) {
      const px = img.pixel(g.x + 200, g.y + 150);
      oracle("get_desktop_state", px === ev.color, `the pixel at the middle of xevlog's window is ${px}, its colour ${ev.color}`);
    }
    const images = (r.res.content ?? []).filter((c) => c.type === "image");
    if (images.length) note("get_desktop_state", "returns base64 image content as well as writing screenshot_out_file");
  }
  r = await run.call("get_desktop_state", {}, { what: "image content" });
  if (r.done) {
    const img = (r.res.content ?? []).find((c) => c.type === "image");
    const h = img ? pngHeader(Buffer.from(img.data, "base64")) : null;
    oracle("get_desktop_state", !!h && img.mimeType === "image/png" && h.width === scr.width && h.height === scr.height, `the image content is a PNG of ${h?.width}x${h?.height} (${img?.mimeType}), the screen ${scr.width}x${scr.height}`);
  }
}

async function windowTools(run, desk, { frame, ev }) {
  // set_window_frame: xwininfo reads the new geometry.
  const want = { x: 420, y: 260, width: 360, height: 240 };
  let r = await run.call("set_window_frame", { pid: frame.pid, window_id: frame.win, ...want, session: M }, { what: "labelled" });
  if (r.done) {
    let g;
    for (let i = 0; i < 30; i++) {
      g = desk.geometry(frame.win);
      if (g.width === want.width && g.height === want.height) break;
      await sleep(100);
    }
    const fe = desk.frameExtents(frame.win);
    const posOK = (near(g.x, want.x, 2) && near(g.y, want.y, 2)) || (near(g.x - fe.left, want.x, 2) && near(g.y - fe.top, want.y, 2));
    oracle("set_window_frame", g.width === want.width && g.height === want.height && posOK, `xwininfo: ${g.width}x${g.height} at (${g.x},${g.y}) (frame extents ${JSON.stringify(fe)}), want ${want.width}x${want.height} at (${want.x},${want.y})`);
  }
  r = await run.call("set_window_frame", { pid: frame.pid, window_id: frame.win, x: 500.5, y: 300, width: 200.4, height: 150 }, { what: "fractional numbers" });
  if (r.done) {
    await sleep(300);
    const g = desk.geometry(frame.win);
    oracle("set_window_frame", near(g.width, 200, 1) && g.height === 150, `fractional size: xwininfo ${g.width}x${g.height}`);
  }

  // verify_state: window predicates, judged against xwininfo.
  const g = desk.geometry(ev.win);
  const fe = desk.frameExtents(ev.win);
  r = await run.call("verify_state", { pid: ev.pid, window_id: ev.win, expect: [{ window: { exists: true } }], timeout_ms: 0, session: M }, { what: "window exists, one sample" });
  if (r.done) oracle("verify_state", r.sc.status === "satisfied" && r.sc.predicates?.[0]?.status === "satisfied", `a window xwininfo sees is reported to exist (${r.sc.status})`);
  r = await run.call("verify_state", { pid: ev.pid, window_id: ev.win, expect: [{ window: { exists: true, bounds: { x: g.x, y: g.y, width: g.width, height: g.height, tolerance_px: Math.max(fe.left, fe.top) + 2 } } }], stable_samples: 2, timeout_ms: 2000 }, { what: "bounds from xwininfo" });
  if (r.done) oracle("verify_state", r.sc.status === "satisfied" && r.sc.stable === true, `bounds ${g.width}x${g.height} at (${g.x},${g.y}) are satisfied and stable (${r.sc.status}, stable ${r.sc.stable}, ${r.sc.samples} samples)`);
  r = await run.call("verify_state", { pid: ev.pid, window_id: ev.win, expect: [{ window: { bounds: { x: g.x + 400, y: g.y, width: g.width, height: g.height, tolerance_px: 0 } } }], timeout_ms: 300, include_screenshot: true }, { what: "wrong bounds, include_screenshot" });
  if (r.done) oracle("verify_state", r.sc.status === "unsatisfied", `bounds 400 px off are unsatisfied (${r.sc.status})`);
}

async function menuTools(run, desk, apps) {
  // A GTK application with a menu bar, reached through AT-SPI.
  const gtk = desk.spawn("gtk3-demo-application", [], { GTK_A11Y: "atspi", NO_AT_BRIDGE: "0", GTK_THEME: "Adwaita" });
  const win = await desk.windowOf(gtk.pid);
  if (!win) {
    violate("invoke_menu", `gtk3-demo-application mapped no window: ${gtk.stderrTail()}`);
    return;
  }
  await sleep(1500); // its accessible tree registers
  apps.gtk = { pid: gtk.pid, win };
  const before = desk.windowsOf(gtk.pid);

  // verify_state on an element: the menu bar's "Help" item exists.
  let r = await run.call("verify_state", { pid: gtk.pid, window_id: win, expect: [{ element: { selector: { label_contains: "Help" }, exists: true } }], timeout_ms: 3000, stable_samples: 1 }, { what: "element label_contains Help" });
  if (r.done) note("verify_state", `element predicate on gtk3-demo-application: ${r.sc.status}`);

  r = await run.call("invoke_menu", { pid: gtk.pid, window_id: win, path: ["Help", "About"], session: M }, { what: "Help > About" });
  if (r.done) {
    let after = [];
    for (let i = 0; i < 50; i++) {
      after = desk.windowsOf(gtk.pid);
      if (after.some((w) => !before.includes(w))) break;
      await sleep(100);
    }
    const added = after.filter((w) => !before.includes(w));
    const names = added.map((w) => desk.tryRun("xdotool", ["getwindowname", String(w)])?.trim());
    oracle("invoke_menu", names.some((n) => /about/i.test(n ?? "")), `a new window of the application appeared: ${JSON.stringify(names)}`);
  }
  r = await run.call("invoke_menu", { pid: gtk.pid, window_id: win, path: ["No Such Menu"] }, { what: "missing path", expect: "refusal" });
}

async function cursorTools(run, desk) {
  let r = await run.call("set_agent_cursor_enabled", { session: M, enabled: true });
  if (r.ok) oracle("set_agent_cursor_enabled", r.sc.enabled === true && r.sc.session === M, "enabled");
  r = await run.call("get_agent_cursor_state", { session: M }, { what: "after enable" });
  if (r.ok) oracle("get_agent_cursor_state", r.sc.enabled === true, `reports enabled (${r.sc.enabled})`);

  r = await run.call("set_agent_cursor_motion", { session: M, glide_duration_ms: 120, spring: 0.5, arc_size: null });
  if (r.ok) oracle("set_agent_cursor_motion", r.sc.motion?.glide_duration_ms === 120 && r.sc.motion?.spring === 0.5, `motion set (${JSON.stringify(r.sc.motion)})`);
  r = await run.call("set_agent_cursor_theme", { session: M, theme_id: "default", reduced_motion: "on" });
  if (r.ok) oracle("set_agent_cursor_theme", r.sc.theme?.reduced_motion === "on", `theme set (${JSON.stringify(r.sc.theme)})`);

  await run.call("move_cursor", { x: 333, y: 222, target: { kind: "desktop", display_id: "primary" }, session: M }, { what: "before get_agent_cursor_state" });
  const p = desk.pointer();
  r = await run.call("get_agent_cursor_state", { session: M }, { what: "after motion and theme" });
  if (r.ok) {
    oracle("get_agent_cursor_state", r.sc.motion?.glide_duration_ms === 120 && r.sc.theme?.reduced_motion === "on", "reports the motion and theme just set");
    note("get_agent_cursor_state", `position (${r.sc.position?.x},${r.sc.position?.y}) after move_cursor; xdotool pointer (${p.x},${p.y})`);
  }
  r = await run.call("set_agent_cursor_enabled", { session: M, enabled: false }, { what: "disable" });
  r = await run.call("get_agent_cursor_state", { session: M }, { what: "after disable" });
  if (r.ok) oracle("get_agent_cursor_state", r.sc.enabled === false, `reports disabled (${r.sc.enabled})`);
}

// ---------------------------------------------------------------------------------------
// The refusal sweep: every listed tool, through the SDK's plain callTool, into a refusal.

/** sweepCases gives, per tool, arguments the tool refuses at once and the code it refuses
 * them with: a window that never existed (with a real pid) for the tools that act on a
 * window, else an argument of the wrong type or value. */
function sweepCases(ev) {
  const pid = ev.pid;
  const win = 0x3fffff0; // a window id that never existed
  const target = { kind: "window", pid, window_id: win };
  const gone = "window_target_not_found";
  const bad = "invalid_arguments";
  return {
    click: [{ x: 1, y: 1, target }, gone],
    double_click: [{ x: 1, y: 1, target }, gone],
    right_click: [{ x: 1, y: 1, target }, gone],
    move_cursor: [{ x: 1, y: 1, target }, gone],
    mouse_button_down: [{ x: 1, y: 1, target }, gone],
    mouse_button_up: [{ x: 1, y: 1, target }, gone],
    drag: [{ from_x: 1, from_y: 1, to_x: 5, to_y: 5, target }, gone],
    scroll: [{ x: 1, y: 1, direction: "down", target }, gone],
    type_text: [{ text: "x", target }, gone],
    press_key: [{ key: "a", target }, gone],
    hotkey: [{ keys: ["ctrl", "c"], target }, gone],
    set_value: [{ pid, window_id: win, value: "x", element_token: "s00000001:1" }, gone],
    set_window_frame: [{ pid, window_id: win, x: 0, y: 0, width: 10, height: 10 }, gone],
    invoke_menu: [{ pid, window_id: win, path: ["File"] }, gone],
    bring_to_front: [{ pid, window_id: win }, gone],
    zoom: [{ pid, window_id: win, x1: 0, y1: 0, x2: 5, y2: 5 }, gone],
    get_window_state: [{ pid, window_id: win }, gone],
    get_accessibility_tree: [{ pid, window_id: win }, gone],
    verify_state: [{ pid, window_id: win, expect: [{ window: { exists: true } }], timeout_ms: 0 }, gone],
    list_windows: [{ pid: "x" }, bad],
    list_apps: [{ no_such_argument: 1 }, bad],
    get_screen_size: [{ no_such_argument: 1 }, bad],
    get_cursor_position: [{ no_such_argument: 1 }, bad],
    get_desktop_state: [{ format: "gif" }, bad],
    launch_app: [{ name: "no-such-program-xyz" }, bad],
    kill_app: [{ pid: 1 }, bad],
    clipboard_read: [{ include_text: "yes" }, bad],
    clipboard_write: [{}, bad],
    set_agent_cursor_enabled: [{ session: M }, bad],
    set_agent_cursor_motion: [{ session: M, spring: "x" }, bad],
    set_agent_cursor_theme: [{ session: M, theme_id: "no-such-theme" }, "unsupported"],
    get_agent_cursor_state: [{}, bad],
    start_session: [{ capture_scope: "sideways" }, bad],
    get_session: [{ session: 5 }, bad],
    end_session: [{ session: 5 }, bad],
    list_sessions: [{ limit: 1000 }, bad],
    escalate_session: [{ session: M, reason: "bogus" }, bad],
    get_session_state: [{ session: 5 }, bad],
    health_report: [{ no_such_argument: 1 }, bad],
    get_config: [{ no_such_argument: 1 }, bad],
    mouse_drag: [{ x: 1, y: 1, target }, gone],
    parallel_mouse_drag: [{ target, drags: [{ from_x: 1, from_y: 1, to_x: 5, to_y: 5 }, { path: [[1, 2], [5, 6]] }] }, gone],
    start_recording: [{ output_dir: "/tmp/recording" }, bad],
    stop_recording: [{}, "recording_inactive"],
    get_recording_state: [{ no_such_argument: 1 }, bad],
    find_credentials: [{}, "unsupported"],
    type_secret: [{ handle: "no-such-credential", target }, gone],
  };
}

/** sweep records, per listed tool, the refusal code the sweep got back (null: none). */
const sweep = {};

async function refusalSweep(run, { ev }) {
  const cases = sweepCases(ev);
  for (const name of [...run.tools.keys()].sort()) {
    const c = cases[name];
    if (!c) {
      sweep[name] = null;
      violate(name, "no refusal case in the sweep for a listed tool: add one to sweepCases");
      continue;
    }
    const [args, code] = c;
    const r = await run.call(name, args, { what: "refusal sweep", expect: "refusal", refusalCodes: [code], invalidInput: true });
    sweep[name] = r.res?.structuredContent?.status === "refused" ? r.code ?? null : null;
    if (r.res && r.res.structuredContent?.status !== "refused") violate(name, `refusal sweep: callTool returned structuredContent ${JSON.stringify(r.res.structuredContent ?? null).slice(0, 120)}, want status "refused" (${code})`);
  }
}

/** otherTools calls the tools outside the contract once or twice each with valid input, so
 * that their successes too are checked against the outputSchema cua-host advertises. */
async function otherTools(run, desk, { ev, term, gtk }) {
  const t = ev.target();
  await run.call("list_windows", {}, { what: "all" });
  await run.call("list_windows", { pid: ev.pid }, { what: "one pid" });
  await run.call("list_apps", {});
  await run.call("health_report", {});
  await run.call("get_config", { session: M });
  await run.call("bring_to_front", { pid: ev.pid, window_id: ev.win });
  await run.call("zoom", { pid: ev.pid, window_id: ev.win, x1: 0, y1: 0, x2: 60, y2: 40 });
  await run.call("get_window_state", { pid: ev.pid, window_id: ev.win }, { what: "no accessibility (degraded)" });
  await run.call("get_window_state", { pid: term.pid, window_id: term.win, include_screenshot: false }, { what: "without screenshot" });
  await run.call("get_accessibility_tree", { pid: gtk?.pid ?? term.pid, max_elements: 50 });
  await run.call("double_click", { x: 20, y: 20, target: t });
  await sleep(400);
  await run.call("right_click", { x: 20, y: 20, target: t });
  await run.call("mouse_button_down", { x: 30, y: 30, target: t });
  await run.call("mouse_button_up", { x: 40, y: 40, target: t });
  const launched = await run.call("launch_app", { name: "xterm", additional_arguments: [], timeout_ms: 10000 }, { expect: "any" });
  if (launched.done && launched.sc.pid) await run.call("kill_app", { pid: launched.sc.pid, grace_ms: 500 });
  if (gtk) {
    // set_value on the accessible tree of gtk3-demo-application: a success or a refusal
    // (no settable element at index 0), both checked against the advertised schema.
    const tree = await run.call("get_window_state", { pid: gtk.pid, window_id: gtk.win, include_screenshot: false, max_elements: 200 }, { what: "gtk3-demo-application" });
    const el = (tree.sc?.elements ?? []).find((e) => /text|entry|slider|spin/i.test(e.role ?? ""));
    if (el?.element_token) await run.call("set_value", { pid: gtk.pid, window_id: gtk.win, element_token: el.element_token, value: "7" }, { expect: "any" });
  }
}

async function refusals(run, desk, { ev, frame }) {
  // A window id that never existed, with a real pid.
  const mark = ev.mark();
  let r = await run.call("click", { x: 10, y: 10, target: { kind: "window", pid: ev.pid, window_id: 0x3fffff0 } }, { what: "window id that never existed", expect: "refusal", refusalCodes: ["window_target_not_found"] });
  const evs = await ev.waitFor(mark, (e) => presses(e).length > 0, 500);
  oracle("click", presses(evs).length === 0, "the refused click reached no window");

  // A stale window id: the window existed and was closed.
  const stale = frame.win;
  process.kill(frame.pid, "SIGKILL");
  for (let i = 0; i < 30 && desk.geometry(stale); i++) await sleep(100);
  const before = desk.pointer();
  r = await run.call("move_cursor", { x: 5, y: 5, target: { kind: "window", pid: frame.pid, window_id: stale } }, { what: "stale window id", expect: "refusal", refusalCodes: ["window_target_not_found"] });
  const after = desk.pointer();
  oracle("move_cursor", before.x === after.x && before.y === after.y, "the refused move left the pointer where it was");
  r = await run.call("set_window_frame", { pid: frame.pid, window_id: stale, x: 0, y: 0, width: 100, height: 100 }, { what: "stale window id", expect: "refusal", refusalCodes: ["window_target_not_found"] });
  r = await run.call("verify_state", { pid: frame.pid, window_id: stale, expect: [{ window: { exists: true } }], timeout_ms: 0 }, { what: "stale window id", expect: "any" });
  if (r.ok) oracle("verify_state", r.sc.status !== "satisfied", `a closed window is not reported to exist (${r.sc.status})`);

  // A display the platform cannot address.
  r = await run.call("move_cursor", { x: 1, y: 1, target: { kind: "desktop", display_id: "secondary" } }, { what: "display_id secondary", expect: "refusal" });
  const still = desk.pointer();
  oracle("move_cursor", still.x === after.x && still.y === after.y, "the refused move to another display left the pointer where it was");
  r = await run.call("click", { x: 1, y: 1, target: { kind: "desktop", display_id: "" } }, { what: "empty display_id", expect: "refusal" });
}

async function endSessions(run) {
  let r = await run.call("end_session", { session: M }, { what: "labelled " + M });
  if (r.ok) oracle("end_session", r.sc.session === M && r.sc.active === false, `${M} ended`);
  r = await run.call("end_session", {}, { what: "implicit" });
  if (r.ok) oracle("end_session", r.sc.active === false, "the implicit session ended");
  r = await run.call("get_screen_size", {}, { what: "after end_session", expect: "refusal", refusalCodes: ["session_ended"] });
}

// ---------------------------------------------------------------------------------------
// Pass two: standard mode on a display the person shares; the consent provider denies.

async function standardPass() {
  const shared = JSON.parse(readFileSync(opt["shared-env"], "utf8"));
  const desk = new Desk({ ...process.env, ...shared });
  const ev = new Xevlog(desk, "conf-person", 300, 200, "00ff00");
  await ev.ready();
  const run = new Run("standard", ["--display", shared.DISPLAY, "--consent", "deny", "--indicator=false"], { ...process.env, ...shared });
  await run.start();
  try {
    const scr = desk.screen();
    let r = await run.call("get_screen_size", {}, { what: "standard mode" });
    if (r.done) oracle("get_screen_size", r.sc.width === scr.width && r.sc.height === scr.height, `standard mode: ${r.sc.width}x${r.sc.height} = xdotool ${scr.width}x${scr.height}`);

    const shot = join(opt.out, "denied.png");
    r = await run.call("get_desktop_state", { screenshot_out_file: shot }, { what: "consent denied", expect: "refusal", refusalCodes: ["authorization_required", "authorization_declined"] });
    oracle("get_desktop_state", !existsSync(shot), "the refused capture wrote no file");

    const p0 = desk.pointer();
    const mark = ev.mark();
    r = await run.call("click", { x: 20, y: 20, target: ev.target() }, { what: "a person's window, consent denied", expect: "refusal", refusalCodes: ["authorization_required", "authorization_declined"] });
    const evs = await ev.waitFor(mark, (e) => presses(e).length > 0, 500);
    const p1 = desk.pointer();
    oracle("click", presses(evs).length === 0 && p0.x === p1.x && p0.y === p1.y, "the refused click reached no window and left the pointer alone");

    desk.clipboardSet("person's secret");
    await sleep(200);
    r = await run.call("clipboard_read", { include_text: true }, { what: "consent denied", expect: "refusal", refusalCodes: ["authorization_required", "authorization_declined"] });
    r = await run.call("type_text", { text: "nope", target: ev.target() }, { what: "a person's window, consent denied", expect: "refusal", refusalCodes: ["authorization_required", "authorization_declined"] });
    const kevs = await ev.waitFor(mark, (e) => keyPresses(e).length > 0, 500);
    oracle("type_text", keyPresses(kevs).length === 0, "the refused typing reached no window");
  } finally {
    desk.killAll();
    await run.close();
  }
}

// ---------------------------------------------------------------------------------------

function table() {
  const rows = [["tool", "calls", "schema-valid", "oracle-confirmed", "refused", "result", "notes"]];
  for (const name of [...contract.keys()].sort()) {
    const s = st(name);
    const na = NOT_ON_LINUX[name];
    const result = s.violations.length ? `FAIL (${s.violations.length})` : na ? "n/a (Linux)" : s.calls === 0 ? "FAIL (not called)" : "ok";
    const why = Object.entries(kindCounts(s.violations)).map(([k, n]) => `${k} ×${n}`);
    rows.push([name, String(s.calls), `${s.schemaValid}/${s.successes}`, `${s.oracleOK}/${s.oracleChecks}`, String(s.refused), result, [...why, ...s.notes].join("; ").slice(0, 220)]);
  }
  const w = rows[0].map((_, i) => Math.max(...rows.slice(0, rows.length).map((r) => (i === 6 ? 0 : r[i].length))));
  const fmt = (r) => r.map((c, i) => (i === 6 ? c : c.padEnd(w[i]))).join("  ");
  return [fmt(rows[0]), rows[0].map((_, i) => (i === 6 ? "-----" : "-".repeat(w[i]))).join("  "), ...rows.slice(1).map(fmt)].join("\n");
}

async function main() {
  let fatal = null;
  try {
    log("== pass 1: unrestricted, private display");
    await unrestrictedPass();
    if (opt["shared-env"]) {
      log("== pass 2: standard, shared display, consent denied");
      await standardPass();
    }
  } catch (e) {
    fatal = e;
    console.error(`fatal: ${e.stack ?? e}`);
    violations.push({ tool: "(harness)", what: `stopped early: ${e.message}` });
  }
  for (const name of contract.keys()) {
    const s = st(name);
    if (!NOT_ON_LINUX[name] && s.calls === 0 && !fatal) violate(name, "never called");
  }
  // The versions agree: the contract files, `cua-host manifest`, and get_config.
  if (ownManifest.contract_version !== manifest.contract_version) violate("(manifest)", `cua-host manifest says contract ${ownManifest.contract_version}, the contract files are ${manifest.contract_version}`);
  if (!fatal && toolContractVersion !== manifest.contract_version) violate("get_config", `tool_contract_version ${JSON.stringify(toolContractVersion)}, the contract files are ${manifest.contract_version}`);
  log("\n== contract conformance (contract " + manifest.contract_version + ")\n" + table());
  if (violations.length) {
    log(`\n== ${violations.length} violation(s)`);
    for (const v of violations) log(`  ${v.tool}: ${v.what}`);
  }
  const report = {
    contract_version: manifest.contract_version,
    manifest_contract_version: ownManifest.contract_version,
    get_config_contract_version: toolContractVersion,
    not_on_linux: NOT_ON_LINUX,
    tools: Object.fromEntries([...stats.values()].map((s) => [s.name, { listed: s.listed ?? false, calls: s.calls, successes: s.successes, schema_valid: s.schemaValid, own_schema_valid: s.ownValid, refused: s.refused, oracle_checks: s.oracleChecks, oracle_confirmed: s.oracleOK, notes: s.notes, kinds: kindCounts(s.violations), violations: s.violations }])),
    refusal_sweep: sweep,
    violations,
  };
  writeFileSync(join(opt.out, "report.json"), JSON.stringify(report, null, 2));
  process.exit(violations.length ? 1 : 0);
}

main();
