/**
 * The top-level commands: each one's usage line and description, and the module under src/cli/commands/ that
 * defines it. The one place these are written: the modules take theirs from here ({@link listedCommand}), and
 * main.ts lists the commands from here in `vespa-bulk --help` and picks the module a command line names, so a
 * command's module (and what it imports) is loaded only when that command runs.
 */
export const commandList = {
  serve: {
    module: 'serve',
    command: 'serve',
    describe:
      'Run the local Vespa simulator: /document/v1 and the config server. Faults can be changed at run time with PUT /_sim/faults.',
  },
  feed: {
    module: 'feed',
    command: 'feed [files..]',
    describe:
      'Feed documents (put, update, remove) from JSONL, JSON, CSV, TSV or Parquet files as fast as the cluster takes them',
  },
  visit: {
    module: 'visit',
    command: 'visit [document]',
    describe: 'Export documents: all slices at once, resumed across cuts, each document written once',
  },
  'update-where': {
    module: 'visit',
    command: 'update-where [document] [update]',
    describe: 'Update every document matching --selection (the service works through them in chunks)',
  },
  'delete-where': {
    module: 'visit',
    command: 'delete-where [document]',
    describe: 'Remove every document matching --selection',
  },
  copy: {
    module: 'visit',
    command: 'copy [document]',
    describe: 'Copy the documents matching --selection from --cluster to --destination-cluster',
  },
  get: {
    module: 'document',
    command: 'get <ids..>',
    describe: 'Print documents, one after another (stops at the first failure)',
  },
  put: {
    module: 'document',
    command: 'put <first> [file]',
    describe: 'Write one document (create or replace): put [id] <file>',
  },
  update: {
    module: 'document',
    command: 'update <first> [file]',
    describe: 'Update fields of one document: update [id] [file]',
  },
  remove: { module: 'document', command: 'remove <first>', describe: 'Remove one document: remove <id|file>' },
  deploy: {
    module: 'deploy',
    command: 'deploy [path]',
    describe:
      'Deploy an application package (directory or .zip): upload, prepare, activate; see subcommands for the separate steps',
  },
  prepare: {
    module: 'deploy',
    command: 'prepare <package>',
    describe:
      'Upload a package (directory or .zip) and prepare it, or prepare an uploaded session id; remembers the session for activate',
  },
  activate: {
    module: 'deploy',
    command: 'activate [session-id]',
    describe: 'Activate a prepared session (default: the last one prepared from this directory)',
  },
  validate: {
    module: 'validate',
    command: 'validate [files..]',
    describe: 'Check a corpus against the schemas of an application package, as the cluster would, without a cluster',
  },
  bench: {
    module: 'bench',
    command: 'bench',
    describe:
      'Benchmark a cluster: generated documents (from the schemas or a template) under a load profile (adaptive, fixed rate, steps)',
  },
  report: {
    module: 'report',
    command: 'report <files..>',
    describe: 'Draw one HTML report from --stats files (the shards of a run merged)',
  },
  compare: {
    module: 'compare',
    command: 'compare <a> <b> [document]',
    describe: 'Compare two corpora, each a cluster (URL) or an export (file or --output-dir directory), by meaning',
  },
} as const;

export type CommandName = keyof typeof commandList;

/** The modules under src/cli/commands/, by file name. */
export type CommandModuleName = (typeof commandList)[CommandName]['module'];

/** A top-level command's usage line and description, for its module's yargs command. */
export function listedCommand(name: CommandName): { command: string; describe: string } {
  const { command, describe } = commandList[name];
  return { command, describe };
}

/** The command a word on the command line names, if it names one. */
export function isCommandName(word: string): word is CommandName {
  return Object.hasOwn(commandList, word);
}
