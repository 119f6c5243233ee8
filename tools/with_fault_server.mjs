// Run a command with Cairn's loopback LLM fault server (tools/llm_fault_server.py) up on a free
// port, its base URL in CAIRN_LLM_FAULT_URL (the wasm browser tests read it at compile time):
//   node tools/with_fault_server.mjs <command> [args…]
// Exits with the command's status; the server is stopped either way.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const port = await new Promise((resolve, reject) => {
  const s = net.createServer();
  s.on('error', reject);
  s.listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const server = spawn('python3', [path.join(root, 'tools', 'llm_fault_server.py'), '--port', String(port)], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/ready (\S+)/);
    if (m) resolve(m[1]);
  });
  server.on('exit', (code) => reject(new Error(`the fault server exited (${code}) before it was ready`)));
});
const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: 'inherit', env: { ...process.env, CAIRN_LLM_FAULT_URL: url } });
child.on('exit', (code, signal) => {
  server.kill();
  process.exit(code ?? (signal ? 1 : 0));
});
