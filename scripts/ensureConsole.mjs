// Builds the console (console/ → console/dist/) when it is missing or older than its sources, so that a
// fresh clone's `npm install` (prepare) and `npm start` serve it. `--if-tools`: skip quietly where the
// build tools are not installed (npm ci --omit=dev); the server then says the console is not built.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const index = path.join(root, 'console/dist/index.html');
const vite = path.join(root, 'node_modules/vite/bin/vite.js');

const newest = (dir) =>
  fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((t, e) => Math.max(t, fs.statSync(path.join(e.parentPath, e.name)).mtimeMs), 0);

const sources = () =>
  Math.max(
    newest(path.join(root, 'console/src')),
    fs.statSync(path.join(root, 'console/index.html')).mtimeMs,
    fs.statSync(path.join(root, 'console/vite.config.ts')).mtimeMs,
  );

export function consoleIsCurrent() {
  return fs.existsSync(index) && fs.statSync(index).mtimeMs >= sources();
}

export function ensureConsole({ ifTools = false } = {}) {
  if (consoleIsCurrent()) return;
  if (!fs.existsSync(vite)) {
    if (ifTools) return;
    throw new Error('the console is not built and vite is not installed: run npm install');
  }
  execFileSync(
    process.execPath,
    [vite, 'build', '--config', 'console/vite.config.ts', '--logLevel', 'warn'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url))
  ensureConsole({ ifTools: process.argv.includes('--if-tools') });
