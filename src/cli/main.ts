import { Argument, Command, CommanderError, InvalidArgumentError } from 'commander';
import { z } from 'zod';
import { ConfigError } from '../config.ts';
import { NotFound, UsageError } from './errors.ts';
import { type Options, REBUILD_TARGETS } from './usage.ts';

// Only what answers `--help` and usage errors is imported up front: the commands, their slices and
// the database clients load when a command runs, so help comes back in well under a second.

const email = (value: string) => {
  if (!z.email().safeParse(value).success)
    throw new InvalidArgumentError('must be an e-mail address');
  return value;
};

/** The command that ran (or failed to parse), whose help a usage error prints. */
let current: Command | undefined;

const program = new Command('npm run cli --')
  .usage('<command> [options] [--json]')
  .description(
    'Manages a hogstream server: projects, keys and roles, read model rebuilds and status, backups ' +
      'of the event log. Settings come from the environment, as for `npm start` (see its --help). ' +
      'Beside a running embedded server, use the same DATA_DIR.',
  )
  .option('--json', 'print the answer as one JSON document')
  .helpCommand('help [command]', 'help for a command')
  // inherited by every command added below: errors come back here, printed with the usage
  .exitOverride()
  .configureOutput({ outputError: () => {} });

/** Runs `words` with the command's options, loading the commands (and the databases) only now. */
const action =
  (...words: string[]) =>
  async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    // commander camel-cases --access-level; the commands read options by their flag names
    const { accessLevel, ...o } = command.optsWithGlobals();
    const values: Options = { ...o, 'access-level': accessLevel };
    current = command;
    // Loading the commands and opening the stores takes seconds: a rebuild says at once what it does.
    if (words[0] === 'rebuild')
      process.stderr.write(
        `rebuilding ${command.args.join(', ')}: opening the data directory and reading the log…\n`,
      );
    const { runCommand } = await import('./commands.ts');
    await runCommand([...words, ...command.args], values);
  };

const project = program.command('project').description('projects: create, reset-token');
project
  .command('create')
  .description('create a project, with a personal API key (every scope) for its owner')
  .requiredOption('--name <name>', 'project name')
  .option('--owner <email>', 'owner (default: the bootstrap admin)', email)
  .action(action('project', 'create'));
project
  .command('reset-token')
  .description(
    'replace the project API key (a leaked key): capture and flags refuse the old one at once; prints the new one',
  )
  .argument('<project-id>', 'project id')
  .action(action('project', 'reset-token'));

const personalKey = program
  .command('personal-key')
  .description('personal API keys: create, list, roll, revoke');
personalKey
  .command('create')
  .description('create a personal API key for a project member')
  .requiredOption('--project <id>', 'project id')
  .requiredOption('--scopes <scopes>', 'comma-separated, e.g. feature_flag:read,person:write, or *')
  .option('--user <email>', 'the key holder (default: the bootstrap admin)', email)
  .option('--label <label>', 'a name for the key')
  .action(action('personal-key', 'create'));
personalKey
  .command('list')
  .description('every personal API key (masked), newest first, with its holder')
  .option('--user <email>', 'only the keys of this user', email)
  .action(action('personal-key', 'list'));
personalKey
  .command('roll')
  .description(
    'a new value for a key (same id, label and scopes); the old value is refused at once',
  )
  .argument('<key-id>', 'the key id, as personal-key list prints it')
  .action(action('personal-key', 'roll'));
personalKey
  .command('revoke')
  .description('delete a key (a leaked one): the next request with it is refused')
  .argument('<key-id>', 'the key id, as personal-key list prints it')
  .action(action('personal-key', 'revoke'));

program
  .command('role')
  .description('roles: create')
  .command('create')
  .description('create a role with an access level and members')
  .requiredOption('--name <name>', 'role name')
  .requiredOption('--access-level <level>', '21 (member) or 37 (admin)')
  .option('--member <email...>', 'members (repeatable)')
  .action(action('role', 'create'));

program
  .command('rebuild')
  .description(
    'rebuild read models from the event log (beside a running embedded server too), with progress; ' +
      'several are rebuilt side by side (the ClickHouse tables beside the Postgres ones)',
  )
  .addArgument(
    new Argument(
      '<read-model...>',
      'what to rebuild; events: the ClickHouse tables; all: every read model',
    ).choices([...REBUILD_TARGETS, 'events', 'all']),
  )
  .action(action('rebuild'));

program
  .command('run-deletions')
  .description('run the queued person-event deletions now (they otherwise run on their schedule)')
  .action(action('run-deletions'));

program
  .command('person')
  .description("persons: history (a person's changes, from the log)")
  .command('history')
  .description("a person's changes, from the log")
  .argument('<distinct-id>', 'any of its distinct ids')
  .option('--project <id>', 'project id (default: the first project)')
  .action(action('person', 'history'));

program
  .command('status')
  .description('each read model against the log head: position, pending events, lag')
  .action(action('status'));

const parked = program
  .command('parked')
  .description('events a read model could not apply and set aside: list, replay, drop');
parked
  .command('list')
  .description('the parked events (of one read model, or of all), with why they failed')
  .argument('[read-model]', 'e.g. persons, clickhouse:events')
  .action(action('parked', 'list'));
parked
  .command('replay')
  .description(
    'apply parked events to a Postgres read model now (once the cause is fixed); those that fail stay parked',
  )
  .argument('<read-model>', 'e.g. persons')
  .option('--position <position>', 'the parked event at this log position')
  .option('--all', 'every parked event of the read model, oldest first')
  .action(action('parked', 'replay'));
parked
  .command('drop')
  .description(
    'forget parked events (they stay in the log; a rebuild parks them again if they fail)',
  )
  .argument('<read-model>', 'e.g. persons, clickhouse:events')
  .option('--position <position>', 'the parked event at this log position')
  .option('--all', 'every parked event of the read model')
  .action(action('parked', 'drop'));

const log = program.command('log').description('the event log: export (backup), import (restore)');
log
  .command('export')
  .description('write the log (or a range of it) to a gzipped NDJSON file')
  .requiredOption('--to <file>', 'e.g. backup.ndjson.gz')
  .option('--from <position>', 'first log position (default: the start)')
  .option('--until <position>', 'last log position (default: the head)')
  .action(action('log', 'export'));
log
  .command('import')
  .description('append the events of an export that the log lacks (then: rebuild all)')
  .requiredOption('--from <file>', 'a file written by log export')
  .action(action('log', 'import'));

/** the (sub)command a command line names, for the help a usage error prints */
function named(argv: readonly string[]): Command {
  let command = program;
  for (const word of argv) {
    const next = command.commands.find((c) => c.name() === word);
    if (!next) break;
    command = next;
  }
  return command;
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length === 0) throw new UsageError('no command given');
  const target = named(argv);
  const words = argv.filter((a) => !a.startsWith('-'));
  if (target.commands.length > 0 && target !== program && words.at(-1) === target.name()) {
    // a noun alone ("project"): commander would print its help and exit 1
    if (!argv.includes('--help') && !argv.includes('-h')) {
      current = target;
      throw new UsageError(
        `"${target.name()}" needs a command: ${target.commands.map((c) => c.name()).join(', ')}`,
      );
    }
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // --help, -h, help [command]: the help is printed; nothing else to do
    if (error.exitCode === 0) return;
    current = named(argv);
    throw new UsageError(error.message.replace(/^error: /, ''));
  }
}

main().catch((error: unknown) => {
  if (error instanceof UsageError)
    console.error(`${error.message}\n\n${(current ?? program).helpInformation()}`);
  else if (error instanceof NotFound) console.error(error.message);
  else if (error instanceof ConfigError) console.error(error.message);
  else console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
