// The package as a TypeScript consumer meets it: test/types/consumer.ts and every ```ts block of the README
// type-check against the built types (`kenning`, `kenning/ai`) under the options `tsc --init` writes (strict,
// exactOptionalPropertyTypes, noUncheckedIndexedAccess, …), and every optional property the package declares
// accepts an explicit undefined.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import ts from "typescript";
import { ROOT } from "../scripts/openapi.mjs";

const TYPES = join(ROOT, "test", "types");
// what `tsc --init` (TypeScript 5.9) writes, with Node's types for `process`
const INIT = {
  module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ESNext,
  types: ["node"], strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true,
  verbatimModuleSyntax: true, isolatedModules: true, noUncheckedSideEffectImports: true,
  moduleDetection: ts.ModuleDetectionKind.Force, skipLibCheck: true, noEmit: true,
};

/** The README's ```ts blocks, each a file of its own; one that uses `memory` without making it gets it declared. */
function readmeBlocks() {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map(([, code], i) => {
    const declared = /\bconst memory\b/.test(code) ? "" : 'declare const memory: import("kenning").Memory;\n';
    return [join(TYPES, `readme-${i + 1}.ts`), declared + code];
  });
}

function check(files) {
  const virtual = new Map(files);
  const host = ts.createCompilerHost(INIT);
  const { fileExists, readFile } = host;
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  const roots = [...readdirSync(TYPES).filter((f) => f.endsWith(".ts")).map((f) => join(TYPES, f)), ...virtual.keys()];
  const program = ts.createProgram(roots, INIT, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName.slice(ROOT.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : "";
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
}

const BAD = join(TYPES, "bad.ts");   // two mistakes the checks must catch, so they cannot pass by checking nothing
const MISTAKES = `import { Memory } from "kenning";
import { kenningTools } from "kenning/ai";
const memory = new Memory("http://127.0.0.1:8420");
await memory.listFacts("sam", { limit: "ten" });
const output: number = await kenningTools(memory, "sam").recall.execute!({ query: "x" }, { toolCallId: "1", messages: [] }) as string;
`;

test("a consumer's code and the README's type-check under strict and exactOptionalPropertyTypes", () => {
  const blocks = readmeBlocks();
  assert.ok(blocks.length >= 3, `${blocks.length} ts blocks in the README`);
  const errors = check([...blocks, [BAD, MISTAKES]]);
  assert.deepEqual(errors.filter((e) => !e.startsWith("test/types/bad.ts")), []);
  assert.deepEqual(errors.filter((e) => e.startsWith("test/types/bad.ts")).map((e) => e.split(" ")[0]),
    ["test/types/bad.ts:4", "test/types/bad.ts:5"], errors.join("\n"));
});

/** Every optional property of the package's own declarations (not the generated openapi.d.ts) includes undefined. */
test("every optional property the package declares accepts undefined", () => {
  const loose = [];
  for (const name of readdirSync(join(ROOT, "dist")).filter((f) => f.endsWith(".d.ts") && f !== "openapi.d.ts")) {
    const source = ts.createSourceFile(name, readFileSync(join(ROOT, "dist", name), "utf8"), ts.ScriptTarget.ESNext, true);
    const visit = (node) => {
      if (ts.isPropertySignature(node) && node.questionToken && node.type) {
        const type = node.type;
        const takes = [ts.SyntaxKind.UnknownKeyword, ts.SyntaxKind.AnyKeyword].includes(type.kind)
          || (ts.isUnionTypeNode(type) && type.types.some((t) => t.kind === ts.SyntaxKind.UndefinedKeyword));
        // MemoryCommand is @ai-sdk/anthropic's input type for the memory tool, kept exactly as it is there
        const exempt = node.name.getText(source) === "view_range";
        if (!takes && !exempt) {
          loose.push(`${name}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${node.getText(source)}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  assert.deepEqual(loose, []);
});
