#!/usr/bin/env node
// compat-fields prints, as Markdown, a field-by-field comparison of the reference contract's
// schemas (testdata/cua-driver-contract/manifest.json) with the inputSchema and outputSchema
// that cua-host reports in tools/list. It starts `cua-host run` on a private display through
// the MCP TypeScript SDK, lists the tools and exits; docs/compatibility.md's tables start
// from its output (scripts/compat-fields.sh builds the binary and runs it).
//
//     npm ci && node compat-fields.mjs --bin CUA_HOST [--contract DIR]

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = dirname(fileURLToPath(import.meta.url));
const { values: opt } = parseArgs({
  options: {
    bin: { type: "string" },
    contract: { type: "string", default: join(here, "testdata", "cua-driver-contract") },
  },
});
if (!opt.bin) {
  console.error("usage: node compat-fields.mjs --bin CUA_HOST [--contract DIR]");
  process.exit(2);
}

const manifest = JSON.parse(readFileSync(join(opt.contract, "manifest.json"), "utf8"));

/** describe renders a property schema in a few words: types, enum, const, bounds. */
function describe(s) {
  if (!s) return "–";
  if (s.const !== undefined) return `const ${JSON.stringify(s.const)}`;
  if (s.enum) return `enum ${s.enum.join("|")}`;
  const alt = s.anyOf ?? s.oneOf;
  if (alt) return alt.map(describe).join(" or ");
  if (s.type === "object" || (Array.isArray(s.type) && s.type.includes("object") && s.properties)) {
    const keys = Object.keys(s.properties ?? {}).sort();
    const t = Array.isArray(s.type) ? s.type.join("|") : "object";
    return keys.length ? `${t} {${keys.join(", ")}}` : t;
  }
  let t = Array.isArray(s.type) ? s.type.join("|") : (s.type ?? "any");
  if (t === "array" && s.items) t = `array of ${describe(s.items)}`;
  const bounds = [];
  if (s.minimum !== undefined) bounds.push(`≥${s.minimum}`);
  if (s.maximum !== undefined) bounds.push(`≤${s.maximum}`);
  if (s.minItems !== undefined) bounds.push(`${s.minItems}+ items`);
  if (s.maxItems !== undefined) bounds.push(`≤${s.maxItems} items`);
  if (s.maxLength !== undefined) bounds.push(`≤${s.maxLength} chars`);
  if (s.format) bounds.push(s.format);
  return bounds.length ? `${t} (${bounds.join(", ")})` : t;
}

/** compare yields one row per property of either schema. */
function compare(ref, ours) {
  const rows = [];
  const refProps = ref?.properties ?? {};
  const ourProps = ours?.properties ?? {};
  const refReq = new Set(ref?.required ?? []);
  const ourReq = new Set(ours?.required ?? []);
  for (const name of [...new Set([...Object.keys(refProps), ...Object.keys(ourProps)])].sort()) {
    const a = refProps[name] ? describe(refProps[name]) + (refReq.has(name) ? ", required" : "") : "–";
    const b = ourProps[name] ? describe(ourProps[name]) + (ourReq.has(name) ? ", required" : "") : "–";
    const status = !ourProps[name] ? "missing in cua-host" : !refProps[name] ? "cua-host only" : a === b ? "same" : "differs";
    rows.push({ name, a, b, status });
  }
  const closed = (s) => (s?.additionalProperties === false ? "closed" : "open");
  if (ref && ours && closed(ref) !== closed(ours)) rows.push({ name: "(other keys)", a: closed(ref), b: closed(ours), status: "differs" });
  return rows;
}

const esc = (s) => String(s).replace(/\|/g, "\\|");

/** success is the success variant of an advertised outputSchema: cua-host advertises
 * {type: "object", anyOf: [success, refusal, error]}. */
const success = (s) => (s?.anyOf ? s.anyOf[0] : s);

const transport = new StdioClientTransport({
  command: opt.bin,
  args: ["run", "--display", "private", "--mode", "unrestricted", "--dangerously-bypass-approvals", "--log-level", "error"],
  env: { ...process.env, DISPLAY: "" },
  stderr: "ignore",
});
const client = new Client({ name: "cua-compat-fields", version: "1.0.0" });
await client.connect(transport);
const listed = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
await client.close();

const out = [];
out.push(`<!-- compat-fields.mjs: contract ${manifest.contract_version} against cua-host's tools/list -->`);
out.push("");
out.push("| tool | field | in | contract 0.7.0 | cua-host | status |");
out.push("|---|---|---|---|---|---|");
for (const t of manifest.tools) {
  const ours = listed.get(t.name);
  if (!ours) {
    out.push(`| \`${t.name}\` | – | – | listed | not in tools/list | missing |`);
    continue;
  }
  for (const [dir, ref, mine] of [["input", t.input_schema, ours.inputSchema], ["output", t.success_output_schema, success(ours.outputSchema)]]) {
    if (!mine) {
      out.push(`| \`${t.name}\` | – | ${dir} | schema | no ${dir} schema declared | differs |`);
      continue;
    }
    for (const r of compare(ref, mine)) out.push(`| \`${t.name}\` | \`${esc(r.name)}\` | ${dir} | ${esc(r.a)} | ${esc(r.b)} | ${r.status} |`);
  }
}
out.push("");
out.push("cua-host tools outside the contract:");
out.push("");
out.push("| tool | inputs | structured output |");
out.push("|---|---|---|");
const inContract = new Set(manifest.tools.map((t) => t.name));
for (const [name, t] of [...listed].sort(([a], [b]) => a.localeCompare(b))) {
  if (inContract.has(name)) continue;
  const ins = Object.keys(t.inputSchema?.properties ?? {}).map((k) => `\`${k}\``).join(", ") || "none";
  const outs = t.outputSchema ? Object.keys(success(t.outputSchema).properties ?? {}).map((k) => `\`${k}\``).join(", ") || "object" : "not declared";
  out.push(`| \`${name}\` | ${ins} | ${outs} |`);
}
console.log(out.join("\n"));
