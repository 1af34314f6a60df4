import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ConfigError } from '../config.ts';
import { NotFound, UsageError } from './errors.ts';
import { COMMANDS, USAGE } from './usage.ts';

// Only what answers `--help` and usage errors is imported up front: the commands, their slices and
// the database clients load when a command runs, so help comes back in well under a second.

function parseCommandLine() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        json: { type: 'boolean' },
        name: { type: 'string' },
        owner: { type: 'string' },
        project: { type: 'string' },
        scopes: { type: 'string' },
        user: { type: 'string' },
        label: { type: 'string' },
        'access-level': { type: 'string' },
        member: { type: 'string', multiple: true },
        to: { type: 'string' },
        from: { type: 'string' },
        until: { type: 'string' },
      },
    });
  } catch (error) {
    // node's own message (an unknown option, a missing value) with our usage, as a usage error
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

async function main() {
  const { values, positionals } = parseCommandLine();
  // `--help`, `help` and unknown commands are answered without opening a database.
  if (values.help || positionals[0] === 'help') {
    console.log(USAGE);
    return;
  }
  if (positionals.length === 0) throw new UsageError('no command given');
  const [noun, verb] = positionals;
  if (!COMMANDS.some(([n, v]) => n === noun && (v === null || v === verb)))
    throw new UsageError(`unknown command "${positionals.slice(0, 2).join(' ')}"`);
  for (const flag of ['owner', 'user'] as const) {
    const email = values[flag];
    if (email !== undefined && !z.email().safeParse(email).success)
      throw new UsageError(`--${flag} must be an e-mail address, not "${email}"`);
  }
  const { runCommand } = await import('./commands.ts');
  await runCommand(positionals, values);
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) console.error(`${error.message}\n${USAGE}`);
  else if (error instanceof NotFound) console.error(error.message);
  else if (error instanceof ConfigError) console.error(error.message);
  else console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
