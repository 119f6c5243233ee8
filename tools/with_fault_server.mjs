// Run a command with Cairn's loopback LLM fault server (tools/llm_fault_server.py) up on a free
// port, its base URL in CAIRN_LLM_FAULT_URL, and, when .venv-llm exists (tools/llm_setup.sh), the
// real SmolLM2 server (tools/llm_server.py) with its URL in CAIRN_LLM_REAL_URL (the wasm browser
// tests read both at compile time):
//   node tools/with_fault_server.mjs <command> [args…]
// Exits with the command's status; the servers are stopped either way.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

/** Start `python script --port P`; resolve with [process, URL] once it prints "ready URL". */
async function start(python, script) {
  const port = await freePort();
  const proc = spawn(python, [path.join(root, 'tools', script), '--port', String(port), '--exit-with-parent'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/ready (\S+)/);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`${script} exited (${code}) before it was ready`)));
  });
  return [proc, url];
}

const servers = [];
const env = { ...process.env };
{
  const [proc, url] = await start('python3', 'llm_fault_server.py');
  servers.push(proc);
  env.CAIRN_LLM_FAULT_URL = url;
}
const venvPython = path.join(root, '.venv-llm', 'bin', 'python');
if (fs.existsSync(venvPython)) {
  const [proc, url] = await start(venvPython, 'llm_server.py');
  servers.push(proc);
  env.CAIRN_LLM_REAL_URL = url;
} else if (process.env.CAIRN_REQUIRE_LLM) {
  console.error(`${venvPython} is absent and CAIRN_REQUIRE_LLM is set: run tools/llm_setup.sh`);
  process.exit(1);
} else {
  console.error(`SKIPPED: the real-server browser test (${venvPython} is absent; run tools/llm_setup.sh)`);
}
const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: 'inherit', env });
child.on('exit', (code, signal) => {
  for (const s of servers) s.kill();
  process.exit(code ?? (signal ? 1 : 0));
});
