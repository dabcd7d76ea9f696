// A real `kenning serve` on loopback for the tests: its own store in a temporary folder, development mode or keys.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { python } from "../scripts/openapi.mjs";

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function kenning(db, args, env) {
  return execFileSync(python(), ["-m", "kenning.cli", "--db", db, ...args], { encoding: "utf8", env, stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/**
 * Start a server. `keys: true` creates a service and a member key of project acme and a service key of
 * project other before it starts (then every request needs one). Resolves once it accepts connections.
 */
export async function startServer({ keys = false, env = {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "kenning-ts-"));
  const db = join(dir, "k.db");
  const environment = { ...process.env, KENNING_HOME: join(dir, "home"), KENNING_WORKER_THREADS: "1", ...env };
  const created = {};
  if (keys) {
    created.service = kenning(db, ["keys", "create", "--project", "acme", "--role", "service"], environment);
    created.member = kenning(db, ["keys", "create", "--project", "acme", "--role", "member"], environment);
    created.other = kenning(db, ["keys", "create", "--project", "other", "--role", "service"], environment);
  }
  const port = await freePort();
  const child = spawn(python(), ["-m", "kenning.cli", "--db", db, "--json", "serve", "--port", String(port)],
    { env: environment, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => { stderr += chunk; });
  const lines = createInterface({ input: child.stdout });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kenning serve did not start in 120 s: ${stderr}`)), 120_000);
    child.on("exit", (code) => reject(new Error(`kenning serve exited with ${code}: ${stderr}`)));
    lines.on("line", (line) => {
      if (JSON.parse(line).event === "serving") { clearTimeout(timer); resolve(); }
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    keys: created,
    db,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
