// Regenerate src/openapi.ts: `npm run generate` (from kenning's code) or `npm run generate -- http://host:port`.
import { writeFileSync } from "node:fs";
import { TYPES, serverDocument, typesFor } from "./openapi.mjs";

const url = process.argv[2];
const document = url ? await (await fetch(`${url.replace(/\/+$/, "")}/openapi.json`)).json() : serverDocument();
writeFileSync(TYPES, await typesFor(document));
console.log(`wrote ${TYPES} (OpenAPI ${document.openapi}, ${Object.keys(document.paths).length} paths)`);
