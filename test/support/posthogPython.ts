import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The real posthog-python 7.x for the tests that drive it: a virtualenv under
 * node_modules/.cache (made once, reused), with the package from pip's configured index. Python
 * is no dependency of the project: where python3, its venv module or the package cannot be had,
 * the answer says why and the caller skips (REQUIRE_POSTHOG_PYTHON=1 makes that a failure).
 */
export type PosthogPython = { python: string; version: string } | { skip: string };

const VENV = path.resolve('node_modules/.cache/posthog-python-7');
const REQUIREMENT = 'posthog>=7,<8';

function run(cmd: string, args: string[], timeoutMs: number) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs });
  const tail = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().split('\n').slice(-5).join(' | ');
  return { ok: r.status === 0, stdout: (r.stdout ?? '').trim(), tail: r.error?.message ?? tail };
}

const installedVersion = (python: string) =>
  run(python, ['-c', 'import posthog; print(posthog.VERSION)'], 30_000);

function setUp(): PosthogPython {
  const python = path.join(VENV, 'bin', 'python');
  const present = fs.existsSync(python) ? installedVersion(python) : undefined;
  if (present?.ok && present.stdout.startsWith('7.')) return { python, version: present.stdout };
  if (!run('python3', ['--version'], 10_000).ok)
    return { skip: 'python3 is not installed (the posthog-python test needs Python 3.9+)' };
  if (!fs.existsSync(python)) {
    const venv = run('python3', ['-m', 'venv', VENV], 120_000);
    if (!venv.ok)
      return {
        skip: `python3 -m venv failed (Debian: apt-get install python3-venv): ${venv.tail}`,
      };
  }
  const pip = run(
    python,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', REQUIREMENT],
    300_000,
  );
  if (!pip.ok) return { skip: `pip install "${REQUIREMENT}" failed: ${pip.tail}` };
  const version = installedVersion(python);
  return version.ok
    ? { python, version: version.stdout }
    : { skip: `posthog does not import: ${version.tail}` };
}

/** Python with posthog-python 7.x, or why not; a failure when REQUIRE_POSTHOG_PYTHON=1. */
export function posthogPython(): PosthogPython {
  const found = setUp();
  if ('skip' in found && process.env.REQUIRE_POSTHOG_PYTHON === '1')
    throw new Error(`REQUIRE_POSTHOG_PYTHON=1 but ${found.skip}`);
  return found;
}
