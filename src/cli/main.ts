import type { AnyCommand } from './command.js';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import yargs from 'yargs';
import { markDefaulted } from './given-flags.js';
import { hideBin } from 'yargs/helpers';
import { describePlace, isVespaBulkError, VespaBulkError, OptionError } from '../index.js';
import { flagName } from './option-flags.js';
import { colorModes, red, setColorMode, type ColorMode } from './color.js';
import { exitCodes, exitCodesEpilog } from './exit-codes.js';
import { unreachableHintOf } from './wait-option.js';

export { exitCodes };

/**
 * Our own version, from the package.json beside this module (src/cli/ in a clone, dist/cli/ installed). yargs'
 * default reads the package.json above the node_modules folder holding yargs: the project's, once installed in one.
 */
export function ownVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

type CommandModuleLoader = () => Promise<{ commands: AnyCommand[] }>;

// Each command's module is imported only when that command runs: together they hold the simulator, the
// visitor, the deployer and the report's assets, about 30 MB of resident memory that a feed has no use for.
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
} satisfies Record<string, CommandModuleLoader>;

/** The module of each top-level command name (kept in step with the modules' `command` strings by a test). */
export const commandModules: Record<string, keyof typeof loaders> = {
  serve: 'serve',
  feed: 'feed',
  visit: 'visit',
  'update-where': 'visit',
  'delete-where': 'visit',
  copy: 'visit',
  get: 'document',
  put: 'document',
  update: 'document',
  remove: 'document',
  deploy: 'deploy',
  prepare: 'deploy',
  activate: 'deploy',
  validate: 'validate',
  bench: 'bench',
  report: 'report',
  compare: 'compare',
};

/**
 * The commands yargs needs for `argv`: the named command's module alone, or every module when no known command
 * is named (top-level help, a typo for recommendCommands to correct).
 */
async function commandsFor(argv: string[]): Promise<AnyCommand[]> {
  // The first word that is neither a flag nor the value of the one global flag taking a separate value (--color).
  const word = argv.find((a, i) => !a.startsWith('-') && !(i > 0 && /^(?:-c|--color)$/.test(argv[i - 1]!)));
  const module = word !== undefined && Object.hasOwn(commandModules, word) ? commandModules[word] : undefined;
  const picked = module !== undefined ? [loaders[module]] : Object.values(loaders);
  return (await Promise.all(picked.map((load) => load()))).flatMap((m) => m.commands);
}

export async function main(argv: string[]): Promise<number> {
  const all = await commandsFor(argv);
  const parser = yargs(argv)
    .scriptName('vespa-bulk')
    .usage('$0 <command> [options]\n\nMoves documents in and out of Vespa as fast as the cluster allows, and loses none of them.')
    .option('color', { alias: 'c', choices: colorModes, default: 'auto' as ColorMode, global: true, describe: 'Colour on stderr: auto (a terminal, unless NO_COLOR is set), never, always' })
    .middleware((argv) => {
      setColorMode(argv.color as ColorMode);
      // yargs knows here, after the command's options were applied, which flags took their default.
      markDefaulted(argv, Object.keys((parser as unknown as { parsed?: { defaulted?: Record<string, boolean> } }).parsed?.defaulted ?? {}));
    })
    .command(all)
    .epilog(exitCodesEpilog)
    .demandCommand(1, 'Name a command.')
    .strict()
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version(ownVersion())
    .wrap(Math.min(110, process.stderr.columns ?? 100))
    // Throwing here (rather than printing) keeps yargs from running the handler after a strict-mode error.
    .fail((message, err) => {
      if (err) throw err;
      throw new VespaBulkError('VB_USAGE', `${message}\nRun 'vespa-bulk --help' for usage.`);
    })
    .exitProcess(false);
  try {
    await parser.parseAsync();
  } catch (err) {
    if (isVespaBulkError(err)) {
      const message = err instanceof OptionError ? err.messageWith(flagName) : err.message;
      process.stderr.write(`${red(`vespa-bulk: ${describePlace(err.place)}${message}`)}
${err.code === 'VB_UNREACHABLE' ? `${unreachableHintOf(argv.find((a) => !a.startsWith('-')))}
` : ''}`);
      // VB_PROTOCOL: --protocol h2 asked for what this server cannot do, a usage error as the other flags' are.
      return err.code === 'VB_USAGE' || err.code === 'VB_PROTOCOL' ? exitCodes.usage : exitCodes.failed;
    }
    process.stderr.write(`${red(`vespa-bulk: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)}\n`);
    return exitCodes.failed;
  }
  return process.exitCode === undefined ? exitCodes.ok : Number(process.exitCode);
}

const invokedDirectly = process.argv[1] !== undefined && /(?:main\.[jt]s|vespa-bulk(?:\.js)?)$/.test(process.argv[1]);
if (invokedDirectly) {
  // undici parses HTTP/1.1 with llhttp compiled to WebAssembly. V8's optimising tier compiles that module in the
  // background on first use, and its compiler's scratch memory was the largest single item of a one-worker feed's
  // peak RSS (about 35 MB of 135). The baseline compiler's code parses responses at no measurable CPU cost per
  // document. Set here rather than in the library: V8 flags are the process's, which the CLI owns.
  setFlagsFromString('--liftoff-only');
  const code = await main(hideBin(process.argv));
  process.exitCode = code;
}
