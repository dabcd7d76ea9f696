// Every public method of the Python SDK has its camelCase counterpart here (sdk-manifest.json is written by
// scripts/sdk_manifest.py on the Python side; tests/test_sdk_manifest.py keeps it current).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { Memory } from "../dist/index.js";

const manifest = JSON.parse(readFileSync(new URL("../sdk-manifest.json", import.meta.url), "utf8"));
const camel = (name) => name.replace(/_+$/, "").replace(/_([a-z])/g, (_, c) => c.toUpperCase());

test("every Python SDK method has a TypeScript counterpart", () => {
  const memory = new Memory("http://127.0.0.1:9");
  const missing = [];
  const names = Object.keys(manifest.methods);
  for (const name of names) {
    const path = name.split(".").map(camel);
    const owner = path.length === 2 ? memory[path[0]] : memory;
    if (typeof owner?.[path.at(-1)] !== "function") missing.push(`${name} → ${path.join(".")}`);
  }
  assert.deepEqual(missing, []);
  assert.ok(names.length >= 40, `${names.length} methods in the manifest`);
  console.log(`parity: ${names.length}/${names.length} Python SDK methods have a TypeScript counterpart`);
});

test("an id or name that would resolve to another route is refused before any request", async () => {
  const { InputError } = await import("../dist/index.js");
  const memory = new Memory("http://127.0.0.1:9", { timeoutMs: 2000 });   // a closed port: a request would fail otherwise
  for (const bad of ["..", ".", "", "victim/facts", "a/b"]) {
    await assert.rejects(memory.deleteFact("victim", bad), InputError, `deleteFact(victim, ${bad})`);
    await assert.rejects(memory.deleteDataset(bad), InputError, `deleteDataset(${bad})`);
    await assert.rejects(memory.listFacts(bad), InputError, `listFacts(${bad})`);
    await assert.rejects(memory.messages.get("victim", bad), InputError, `messages.get(victim, ${bad})`);
    await assert.rejects(memory.messages.delete("victim", bad), InputError, `messages.delete(victim, ${bad})`);
    await assert.rejects(memory.messages.deleteChat("victim", bad), InputError, `messages.deleteChat(victim, ${bad})`);
    await assert.rejects(memory.notes.forget("victim", bad), InputError, `notes.forget(victim, ${bad})`);
    await assert.rejects(memory.erase.fact("victim", bad), InputError, `erase.fact(victim, ${bad})`);
    await assert.rejects(memory.erase.message("victim", bad), InputError, `erase.message(victim, ${bad})`);
    await assert.rejects(memory.erase.content(bad, "Lisbon"), InputError, `erase.content(${bad})`);
    await assert.rejects(memory.erase.dataset(bad), InputError, `erase.dataset(${bad})`);
    await assert.rejects(memory.erase.log(bad), InputError, `erase.log(${bad})`);
    await assert.rejects(memory.documents.read(bad, "plan.md"), InputError, `documents.read(${bad})`);
  }
  for (const path of ["../scope-b/plan.md", "a/../../b", "./plan.md", "a/./b.md", ""]) {
    await assert.rejects(memory.documents.read("scope-a", path), InputError, `documents.read(scope-a, ${path})`);
    await assert.rejects(memory.documents.delete("scope-a", path), InputError, `documents.delete(scope-a, ${path})`);
  }
});
