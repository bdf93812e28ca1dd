/**
 * The CLI's entry, run by bin/vespa-bulk.js: the internal entry of the package. It is not in package.json
 * `exports` and no part of the published contract (docs/library.md): its exports and the modules of src/cli/
 * change with the CLI. The CLI imports what it needs of the library from the modules that define it, never
 * through a published entry (test/architecture/public-api.test.ts), so it may use what users are not offered.
 */
import type { AnyCommand } from './command.js';
import { readFileSync } from 'node:fs';
import { isSea } from 'node:sea';
import { markDefaulted } from './given-flags.js';
import { describePlace, isVespaBulkError } from '../core/errors.js';
import { OptionError } from '../core/options-check.js';
import { commandList, isCommandName, listedCommand, type CommandModuleName, type CommandName } from './command-list.js';
import { flagName } from './option-flags.js';
import { red, setColorMode, type ColorMode } from './color.js';
import { exitCodes, exitCodesEpilog } from './exit-codes.js';
import { unreachableHintOf } from './wait-option.js';
import { commandLineError, parserState } from './usage-error.js';
import { asksTopHelp, colorOption, helpWidth, topHelp, topUsage } from './top-help.js';

export { exitCodes };

/**
 * Our own version, from the package.json beside this module (src/cli/ in a clone, dist/cli/ installed). yargs'
 * default reads the package.json above the node_modules folder holding yargs: the project's, once installed in one.
 */
export function ownVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** What --version prints: our version, and in the single executable the Node it carries. */
function versionText(): string {
  if (!isSea()) return ownVersion();
  return `${ownVersion()} (single executable: Node ${process.version}, ${process.platform}-${process.arch})`;
}

type CommandModuleLoader = () => Promise<{ commands: AnyCommand[] }>;

// Each command's module is imported only when that command runs: together they hold the simulator, the
// visitor, the deployer and the report, far more than any one command uses (benchmarks/startup/run.ts).
const loaders = {
  serve: () => import('./commands/serve.js'),
  feed: () => import('./commands/feed.js'),
  visit: () => import('./commands/visit.js'),
  document: () => import('./commands/document.js'),
  deploy: () => import('./commands/deploy.js'),
  validate: () => import('./commands/validate.js'),
  bench: () => import('./commands/bench.js'),
  report: () => import('./commands/report.js'),
  compare: () => import('./commands/compare.js'),
} satisfies Record<CommandModuleName, CommandModuleLoader>;

/**
 * The commands yargs needs for `argv`: the named command's module alone; when no known command is named (the
 * top-level help, a typo for recommendCommands to correct), each command as its usage line and description
 * only (command-list.ts), with no module loaded.
 */
async function commandsFor(argv: string[]): Promise<AnyCommand[]> {
  // The first word that is neither a flag nor the value of the one global flag taking a separate value (--color).
  const word = argv.find((a, i) => !a.startsWith('-') && !(i > 0 && /^(?:-c|--color)$/.test(argv[i - 1]!)));
  if (word !== undefined && isCommandName(word)) return (await loaders[commandList[word].module]()).commands;
  return Object.keys(commandList).map((name) => ({ ...listedCommand(name as CommandName), handler: () => {} }));
}

/**
 * yargs renders a command's whole help as it starts the command's handler, to have it at hand should the handler
 * later call showHelp(); ours never do (a failure is a message and an exit code, .fail() above). For `feed`
 * that rendering took more CPU than all the rest of a one-document feed (benchmarks/startup/run.ts), so it is
 * skipped; a help asked for (--help) is rendered as before. Through yargs' internals, hence the guard: were
 * they to change, yargs would render the help as it does by default.
 */
function skipHelpCache(parser: unknown): void {
  const usage = (
    parser as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } }
  )
    .getInternalMethods?.()
    .getUsageInstance?.();
  if (typeof usage?.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};
}

export async function main(argv: string[]): Promise<number> {
  // The help a new user asks for first, drawn without loading yargs (top-help.ts).
  if (asksTopHelp(argv)) {
    process.stdout.write(`${topHelp()}\n`);
    return exitCodes.ok;
  }
  const [all, { default: yargs }] = await Promise.all([commandsFor(argv), import('yargs')]);
  const parser = yargs(argv)
    .scriptName('vespa-bulk')
    .usage(topUsage)
    .option('color', colorOption)
    .middleware((argv) => {
      setColorMode(argv.color as ColorMode);
      // yargs knows here, after the command's options were applied, which flags took their default. It names a
      // flag by its key, so its aliases (`--deadline` for `--max-failure-seconds`) are added: argv has them too.
      const parsed = (
        parser as unknown as { parsed?: { defaulted?: Record<string, boolean>; aliases?: Record<string, string[]> } }
      ).parsed;
      const keys = Object.keys(parsed?.defaulted ?? {});
      markDefaulted(
        argv,
        keys.flatMap((key) => [key, ...(parsed?.aliases?.[key] ?? [])]),
      );
    })
    .command(all)
    .epilog(exitCodesEpilog)
    .demandCommand(1, 'Name a command.')
    .strict()
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version(versionText())
    .wrap(helpWidth())
    // Throwing here (rather than printing) keeps yargs from running the handler after a strict-mode error.
    .fail((message, err) => {
      if (err) throw err;
      throw commandLineError(message, argv, parserState(parser, argv, Object.keys(commandList)));
    })
    .exitProcess(false);
  skipHelpCache(parser);
  try {
    await parser.parseAsync();
  } catch (err) {
    if (isVespaBulkError(err)) {
      const message = err instanceof OptionError ? err.messageWith(flagName) : err.message;
      process.stderr.write(`${red(`vespa-bulk: ${describePlace(err.place)}${message}`)}
${
  err.code === 'VB_UNREACHABLE'
    ? `${unreachableHintOf(
        argv.find((a) => !a.startsWith('-')),
        err,
      )}
`
    : ''
}`);
      // VB_PROTOCOL: --protocol h2 asked for what this server cannot do, a usage error as the other flags' are.
      return err.code === 'VB_USAGE' || err.code === 'VB_PROTOCOL' ? exitCodes.usage : exitCodes.failed;
    }
    process.stderr.write(`${red(`vespa-bulk: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)}\n`);
    return exitCodes.failed;
  }
  return process.exitCode === undefined ? exitCodes.ok : Number(process.exitCode);
}

const invokedDirectly =
  isSea() || (process.argv[1] !== undefined && /(?:main\.[jt]s|vespa-bulk(?:\.js)?)$/.test(process.argv[1]));
if (invokedDirectly) {
  // undici parses HTTP/1.1 with llhttp compiled to WebAssembly. V8's optimising tier compiles that module in the
  // background on first use, and its compiler's scratch memory was the largest single item of a one-worker feed's
  // peak RSS (about 35 MB of 135). The baseline compiler's code parses responses at no measurable CPU cost per
  // document. Set here rather than in the library: V8 flags are the process's, which the CLI owns. Set at the
  // first WebAssembly compile rather than now: a V8 flag changed at run time costs the code cache of every
  // built-in module loaded after it (liftoff-only.ts). Not loaded for the top-level help, which compiles none.
  const argv = process.argv.slice(2);
  // No top-level await: the single executable runs this module bundled as CommonJS (scripts/build-sea.mjs).
  void (asksTopHelp(argv) ? Promise.resolve() : import('./liftoff-only.js').then((m) => m.liftoffOnlyBeforeWasm()))
    .then(() => main(argv))
    .then((code) => {
      process.exitCode = code;
    });
}
