// The committed types (src/openapi.ts) are what openapi-typescript makes of the document a live server serves.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { TYPES, typesFor } from "../scripts/openapi.mjs";
import { startServer } from "./server.mjs";

test("src/openapi.ts matches the server's /openapi.json", async () => {
  const server = await startServer();
  try {
    const document = await (await fetch(`${server.url}/openapi.json`)).json();
    const fresh = await typesFor(document);
    const committed = readFileSync(TYPES, "utf8");
    assert.ok(fresh === committed, "src/openapi.ts is out of date with the server's API: run `npm run generate` and commit it");
    assert.match(committed, /messages_thread: \{/);
  } finally {
    await server.stop();
  }
});
