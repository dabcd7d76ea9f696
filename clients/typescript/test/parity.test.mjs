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
