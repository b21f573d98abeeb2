#!/usr/bin/env node
// Drive `cua-host serve` from Node.
//
// The app holds serve's stdin/stdout: JSON-RPC 2.0, one object per line, written and read
// here by hand. Each session is reached with the MCP TypeScript SDK: a Client over a
// StdioClientTransport that starts `cua-host mcp-connect ENDPOINT`, the same command any
// MCP client configured with a command would run.
//
// It creates two sessions in two trust domains, checks that they run in different workers
// on different private displays, makes one session type into a terminal (the file the
// terminal writes is the oracle), answers a consent request (taking a status first, which
// shows the asking call in flight), revokes one session and shows the other still works,
// then closes stdin and checks that every worker, proxy, display and endpoint is gone.
//
//     npm ci && node serve_demo.mjs --bin /path/to/cua-host [--out DIR]
//
// Exit status 0 when every step held.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (s) => console.log(s);

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
  log(`✓ ${what}`);
}

/** alive reports whether pid runs and is not a zombie. */
function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}

/** Serve is a running `cua-host serve` and its control stream. */
class Serve {
  constructor(bin, args, env) {
    this.proc = spawn(bin, ["serve", ...args], { stdio: ["pipe", "pipe", "inherit"], env });
    this.nextId = 0;
    this.waiting = new Map(); // id -> {resolve, method}
    this.notes = []; // notifications not yet waited for
    this.noteWaiters = [];
    this.consents = [];
    // statusAtConsent holds, per consent_request, what status said of the asking session
    // before the app answered.
    this.statusAtConsent = [];
    this.grant = true;
    this.exited = new Promise((resolve) => this.proc.on("exit", (code, signal) => resolve({ code, signal })));
    // A write after serve exited must not kill the demo: the exit is what it reports.
    this.proc.stdin.on("error", () => {});
    createInterface({ input: this.proc.stdout }).on("line", (line) => this.#receive(JSON.parse(line)));
  }

  #receive(msg) {
    if (msg.id !== undefined && ("result" in msg || "error" in msg)) {
      const w = this.waiting.get(msg.id);
      this.waiting.delete(msg.id);
      w?.resolve(msg);
    } else if (msg.method === "consent_request") {
      this.#decide(msg.params);
    } else {
      this.notes.push(msg);
      for (const w of this.noteWaiters) w();
    }
  }

  /**
   * decide answers one consent_request. Before it does, it takes a status: the call that
   * asked is in flight in its worker, waiting for this very decision.
   */
  async #decide(req) {
    this.consents.push(req);
    let s;
    try {
      const st = await this.call("status");
      s = st.sessions.find((x) => x.label === req.session);
    } catch (err) {
      log(`  status: ${err.message}`); // the decision goes out all the same
    }
    this.statusAtConsent.push({ session: req.session, in_flight_calls: s?.in_flight_calls, awaiting_consent: s?.awaiting_consent, tools: s?.calls?.map((c) => c.tool) });
    log(`  consent_request #${req.id}: ${req.session} wants ${req.operation} on ${req.resource} (${req.tool}); status: ${s?.in_flight_calls} call(s) in flight [${s?.calls?.map((c) => c.tool).join(", ")}], ${s?.awaiting_consent} awaiting consent → ${this.grant ? "grant" : "deny"}`);
    this.request("consent_decision", { id: req.id, granted: this.grant });
  }

  /** request sends one request and resolves with the whole reply object. */
  request(method, params) {
    const id = ++this.nextId;
    const reply = new Promise((resolve) => this.waiting.set(id, { resolve, method }));
    const msg = { jsonrpc: "2.0", id, method };
    if (params !== undefined) msg.params = params;
    this.proc.stdin.write(JSON.stringify(msg) + "\n");
    return reply;
  }

  /** call sends one request and resolves with its result, or rejects with its error. */
  async call(method, params, timeoutMs = 30000) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${method}: no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const msg = await Promise.race([this.request(method, params), timeout]);
      if (msg.error) throw new Error(`${method}: ${msg.error.code} ${msg.error.message}`);
      return msg.result;
    } finally {
      clearTimeout(timer);
    }
  }

  /** waitNote resolves with the params of the first notification method that pred accepts. */
  async waitNote(method, pred = () => true, timeoutMs = 10000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.notes.findIndex((m) => m.method === method && pred(m.params ?? {}));
      if (i >= 0) return this.notes.splice(i, 1)[0].params;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${method} notification within ${timeoutMs} ms`);
      await new Promise((resolve) => {
        const t = setTimeout(resolve, left);
        this.noteWaiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
      this.noteWaiters = [];
    }
  }

  /** close ends serve's stdin (end-of-file) and resolves with its exit. */
  async close(timeoutMs = 10000) {
    this.proc.stdin.end();
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`serve did not exit within ${timeoutMs} ms of end-of-file`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** connect opens one MCP session on a session endpoint through `cua-host mcp-connect`. */
async function connect(bin, endpoint) {
  const client = new Client({ name: "serve_demo.mjs", version: "1.0.0" });
  const transport = new StdioClientTransport({ command: bin, args: ["mcp-connect", endpoint], stderr: "pipe" });
  await client.connect(transport);
  return client;
}

/** tool calls one tool and returns its structured content, its outcome (in _meta) and the whole result. */
async function tool(client, name, args = {}) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
  const sc = res.structuredContent ?? {};
  const outcome = res._meta?.["cua-host/outcome"];
  const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join(" ");
  log(`  ${name} → ${outcome}${res.isError ? " (error)" : ""}: ${JSON.stringify(text.slice(0, 100))}`);
  return { res, sc, outcome };
}

async function main() {
  const { values } = parseArgs({
    options: {
      bin: { type: "string", default: process.env.CUA_HOST_BIN ?? "cua-host" },
      out: { type: "string", default: "" },
    },
  });
  const bin = values.bin;
  const out = values.out || mkdtempSync(join(tmpdir(), "serve-demo-node-"));
  mkdirSync(out, { recursive: true });

  // The terminal's shell starts in a fresh HOME, so that no start-up file of yours can
  // hold it up before it reads what the session types.
  const home = join(out, "home");
  mkdirSync(home, { recursive: true });
  const serve = new Serve(bin, ["--log-file", join(out, "serve.log"), "--consent-timeout", "20s"], { ...process.env, HOME: home });

  log("→ create_session red/alpha and blue/beta (private displays)");
  const [alpha, beta] = await Promise.all([
    serve.call("create_session", { label: "alpha", trust_domain: "red", display: "private" }),
    serve.call("create_session", { label: "beta", trust_domain: "blue", display: "private" }),
  ]);
  const status = await serve.call("status");
  const workers = Object.fromEntries(status.workers.map((w) => [w.trust_domain, w]));
  const displays = Object.fromEntries(status.displays.map((d) => [d.trust_domain, d]));
  check(workers.red.pid !== workers.blue.pid, `two workers: red pid ${workers.red.pid}, blue pid ${workers.blue.pid}`);
  check(displays.red.name !== displays.blue.name && displays.red.server_pid !== displays.blue.server_pid,
    `two private displays: red ${displays.red.name}, blue ${displays.blue.name}`);
  check((statSync(dirname(alpha.endpoint.unix)).mode & 0o777) === 0o700, "the endpoint directory is 0700");
  const pids = [workers.red.pid, workers.blue.pid, alpha.proxy_pid, beta.proxy_pid, ...displays.red.pids, ...displays.blue.pids];

  log("→ alpha: launch a terminal and type into it (MCP SDK over `cua-host mcp-connect`)");
  const a = await connect(bin, alpha.endpoint.unix);
  const { sc: launched, outcome: launchOutcome } = await tool(a, "launch_app", { name: "xterm" });
  check(launchOutcome === "completed" && launched.window_ids?.length > 0, `the terminal runs (pid ${launched.pid})`);
  const target = { pid: launched.pid, window_id: launched.window_ids[0] };
  const marker = join(out, "alpha.txt");
  await tool(a, "type_text", { ...target, text: `echo hello-from-node > ${marker}` });
  await tool(a, "press_key", { ...target, key: "Return" });
  const read = () => (existsSync(marker) ? readFileSync(marker, "utf8").trim() : "");
  for (const deadline = Date.now() + 15000; Date.now() < deadline && !read(); ) await sleep(50);
  check(read() === "hello-from-node", `the terminal on alpha's display wrote ${marker}`);

  log("→ beta: read the clipboard (needs consent: the app is asked)");
  const b = await connect(bin, beta.endpoint.unix);
  await tool(b, "clipboard_write", { text: "from-beta" });
  const { sc: clip, outcome: clipOutcome } = await tool(b, "clipboard_read", { include_text: true });
  check(serve.consents.some((c) => c.session === "beta"), "a consent_request for beta reached the app and was answered");
  check(clipOutcome === "completed" && JSON.stringify(clip).includes("from-beta"), "the granted clipboard_read completed with beta's text");
  const atConsent = serve.statusAtConsent.find((x) => x.session === "beta");
  check(atConsent?.in_flight_calls === 1 && atConsent.awaiting_consent === 1 && atConsent.tools?.[0] === "clipboard_read",
    "while the app decided, status showed beta's clipboard_read in flight, awaiting consent");
  const after = await serve.call("status");
  check(after.in_flight_calls === 0, "once it returned, status shows no call in flight");

  log("→ revoke alpha");
  await serve.call("revoke_session", { session: "alpha" });
  const ended = await serve.waitNote("session_ended", (p) => p.session === "alpha");
  check(ended.reason === "revoked", "session_ended(alpha, revoked)");
  check(!existsSync(alpha.endpoint.unix), "alpha's socket is gone");
  let refused = false;
  try {
    await tool(a, "get_screen_size");
  } catch {
    refused = true;
  }
  check(refused, "alpha's open MCP session no longer answers");
  let reconnected = true;
  try {
    const again = await connect(bin, alpha.endpoint.unix);
    await again.close();
  } catch {
    reconnected = false;
  }
  check(!reconnected, "alpha's endpoint refuses new connections");
  check(!alive(workers.red.pid), "red's worker (its last session ended) is gone");
  const { sc: size, outcome: sizeOutcome } = await tool(b, "get_screen_size");
  check(sizeOutcome === "completed", "beta still works");

  log("→ close stdin");
  await a.close().catch(() => {});
  await b.close();
  const exit = await serve.close();
  check(exit.code === 0, "serve exited 0 after end-of-file");
  await sleep(200);
  const left = pids.filter(alive);
  check(left.length === 0, `no worker, proxy or display process left (checked ${pids.length} pids)`);
  check(!existsSync(dirname(alpha.endpoint.unix)), "the endpoint directory is gone");
  log("ok");
}

main().then(
  () => process.exit(0),
  (err) => {
    log(`✗ ${err?.stack ?? err}`);
    process.exit(1);
  },
);
