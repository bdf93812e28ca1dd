import type { AnyCommand } from './command.js';
import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { describePlace, isVespaBulkError, VespaBulkError } from '../errors.js';
import { OptionError } from '../options-check.js';
import { flagName } from './option-flags.js';
import { commands as serveCommands } from './commands/serve.js';
import { commands as feedCommands } from './commands/feed.js';
import { commands as visitCommands } from './commands/visit.js';
import { commands as documentCommands } from './commands/document.js';
import { commands as deployCommands } from './commands/deploy.js';
import { commands as validateCommands } from './commands/validate.js';
import { commands as benchCommands } from './commands/bench.js';
import { commands as reportCommands } from './commands/report.js';
import { colorModes, red, setColorMode, type ColorMode } from './color.js';
import { exitCodes, exitCodesEpilog } from './exit-codes.js';
import { unreachableHint } from './wait-option.js';

export { exitCodes };


/**
 * Our own version, from the package.json beside this module (src/cli/ in a clone, dist/cli/ installed). yargs'
 * default reads the package.json above the node_modules folder holding yargs: the project's, once installed in one.
 */
export function ownVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export async function main(argv: string[]): Promise<number> {
  const all: AnyCommand[] = [...serveCommands, ...feedCommands, ...visitCommands, ...documentCommands, ...deployCommands, ...validateCommands, ...benchCommands, ...reportCommands];
  const parser = yargs(argv)
    .scriptName('vespa-bulk')
    .usage('$0 <command> [options]\n\nMoves documents in and out of Vespa as fast as the cluster allows, and loses none of them.')
    .option('color', { alias: 'c', choices: colorModes, default: 'auto' as ColorMode, global: true, describe: 'Colour on stderr: auto (a terminal, unless NO_COLOR is set), never, always' })
    .middleware((argv) => setColorMode(argv.color as ColorMode))
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
${err.code === 'VB_UNREACHABLE' ? `${unreachableHint}
` : ''}`);
      return err.code === 'VB_USAGE' ? exitCodes.usage : exitCodes.failed;
    }
    process.stderr.write(`${red(`vespa-bulk: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)}\n`);
    return exitCodes.failed;
  }
  return process.exitCode === undefined ? exitCodes.ok : Number(process.exitCode);
}

const invokedDirectly = process.argv[1] !== undefined && /(?:main\.[jt]s|vespa-bulk(?:\.js)?)$/.test(process.argv[1]);
if (invokedDirectly) {
  const code = await main(hideBin(process.argv));
  process.exitCode = code;
}
