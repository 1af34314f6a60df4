import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const UNLEASH_VERSION = '8.2.0';

/**
 * Installs unleash-server (≈360 packages) once, outside the repository, so it never reaches
 * package.json, CI installs or the linters; returns the install prefix.
 */
export async function installUnleash(log: (s: string) => void): Promise<string> {
  const dir = path.join(os.homedir(), '.cache', 'hogstream-bench', `unleash-${UNLEASH_VERSION}`);
  if (fs.existsSync(path.join(dir, 'node_modules', 'unleash-server', 'package.json'))) return dir;
  log(`installing unleash-server@${UNLEASH_VERSION} into ${dir} (≈40 s, once)`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"bench-peer","private":true}\n');
  execFileSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', `unleash-server@${UNLEASH_VERSION}`],
    { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return dir;
}
