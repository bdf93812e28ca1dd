import type { AnyCommand } from '../command.js';
import { listedCommand } from '../command-list.js';
import type { Argv } from 'yargs';
import { VespaBulkError } from '../../core/errors.js';
import { validate } from '../../validate/validate.js';
import { writeSummary } from '../summary-names.js';

/**
 * `vespa-bulk validate FILES... --app DIR|ZIP` (or `--config-url URL`): judges a corpus against the schemas
 * without a cluster. The JSON summary goes to stdout, refused operations to --failures (as feed writes them);
 * exit 0 when all pass, 1 when some are refused, 2 for bad usage.
 */
interface ValidateArgs {
  files?: string[];
  app?: string;
  'config-url'?: string;
  failures?: string;
  quiet: boolean;
}

function builder(y: Argv): Argv<ValidateArgs> {
  return y
    .positional('files', {
      type: 'string',
      array: true,
      describe: "Feed files ('-' for stdin, .gz decompressed), read as feed reads them",
    })
    .option('app', { type: 'string', describe: 'Application package: a directory, a .zip or a gzipped tar' })
    .option('config-url', {
      type: 'string',
      describe: 'Config server URL: validate against the package of its active application',
    })
    .option('failures', {
      type: 'string',
      describe: 'Write refused operations here (as feedable input) and their reasons to <file>.reasons.jsonl',
    })
    .option('quiet', {
      alias: 'q',
      type: 'boolean',
      default: false,
      describe: 'Do not print the first refusals on stderr',
    });
}

const shownRefusals = 5;

async function handler(argv: ValidateArgs): Promise<void> {
  let files = argv.files ?? [];
  // yargs drops a bare '-' from the positionals.
  if (process.argv.slice(2).includes('-') && !files.includes('-')) files = [...files, '-'];
  if (files.length === 0) throw new VespaBulkError('VB_USAGE', "validate needs input files ('-' for stdin)");
  if ((argv.app === undefined) === (argv['config-url'] === undefined))
    throw new VespaBulkError('VB_USAGE', 'give the schema with exactly one of --app DIR|ZIP or --config-url URL');
  let shown = 0;
  const outcome = await validate(files.length === 1 ? files[0] : files, {
    app: argv.app,
    configUrl: argv['config-url'],
    failures: argv.failures,
    onRefused: (r) => {
      if (argv.quiet || shown++ >= shownRefusals) return;
      process.stderr.write(`${r.input}:${r.line}: ${r.status ?? r.code}: ${r.message}\n`);
    },
  });
  const s = outcome.summary;
  writeSummary({ ...s, ...(outcome.failuresFile ? { 'validator.failures.file': outcome.failuresFile } : {}) });
  const refused = s['validator.error.count'];
  if (refused > 0) {
    const where =
      outcome.failuresFile !== undefined
        ? ` (written to ${outcome.failuresFile}, reasons in ${outcome.failuresFile}.reasons.jsonl)`
        : ' (give --failures FILE to keep them)';
    process.stderr.write(
      `vespa-bulk: ${refused} of ${s['validator.operation.count']} operations would be refused${where}\n`,
    );
    process.exitCode = 1;
  }
}

export const commands: AnyCommand[] = [
  {
    ...listedCommand('validate'),
    builder: builder,
    handler: handler as unknown as AnyCommand['handler'],
  },
];
