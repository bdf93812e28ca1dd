import type { Argv } from 'yargs';
import { VespaBulkError } from '../core/errors.js';
import { closestName } from '../core/closest-name.js';

/**
 * The error of a command line that yargs refused (strict mode): what was wrong, a suggestion where a word was
 * mistyped (as `git` and `npm` do), and the help of the command at hand rather than the top level's.
 */

/** What the parser knew when it refused the line: the command run (its words) and its flags. */
export interface ParserState {
  /** The words of the command at hand, e.g. `['deploy', 'status']`; empty at the top level. */
  command: readonly string[];
  /** Its flags (long and short, with their aliases), without dashes. */
  flags: readonly string[];
  /** The top-level command names. */
  commands: readonly string[];
}

/** What `parser` knows at its failure: the command at hand (yargs' context, where it tells) and that command's flags. */
export function parserState(parser: Argv, argv: readonly string[], commands: readonly string[]): ParserState {
  // getOptions() is yargs' public API, missing from its types.
  const { key, alias } = (
    parser as unknown as { getOptions: () => { key: Record<string, unknown>; alias: Record<string, string[]> } }
  ).getOptions();
  const internal = (
    parser as unknown as { getInternalMethods?: () => { getContext?: () => { commands?: string[] } } }
  ).getInternalMethods?.();
  const word = commandWord(argv);
  const command = internal?.getContext?.().commands ?? (word !== undefined && commands.includes(word) ? [word] : []);
  return { command, flags: [...Object.keys(key), ...Object.values(alias).flat()], commands };
}

/** The words that are neither flags nor the value of the one global flag taking a separate value (--color). */
function words(argv: readonly string[]): string[] {
  return argv.filter((a, i) => !a.startsWith('-') && !(i > 0 && /^(?:-c|--color)$/.test(argv[i - 1]!)));
}

function commandWord(argv: readonly string[]): string | undefined {
  return words(argv)[0];
}

/** The VB_USAGE error for `message` (yargs' own), said better where `argv` shows what went wrong. */
export function commandLineError(message: string, argv: readonly string[], state: ParserState): VespaBulkError {
  const help =
    state.command.length === 0
      ? "Run 'vespa-bulk --help' for the commands."
      : `Run 'vespa-bulk ${state.command.join(' ')} --help' for its flags.`;
  const word = commandWord(argv);
  if (state.command.length === 0 && word !== undefined && !state.commands.includes(word)) {
    const near = closestName(word, state.commands);
    return new VespaBulkError(
      'VB_USAGE',
      `unknown command '${word}'${near !== undefined ? `: did you mean ${near}?` : ''}\n${help}`,
    );
  }
  // yargs' recommendCommands for a subcommand (`deploy statsu`): its message names only the suggestion.
  const suggested = /^Did you mean (\S+)\?$/.exec(message)?.[1];
  const typed = words(argv)[state.command.length];
  if (suggested !== undefined && typed !== undefined) {
    const at = state.command.join(' ');
    return new VespaBulkError(
      'VB_USAGE',
      `unknown command '${at} ${typed}': did you mean ${at} ${suggested}?\nRun 'vespa-bulk ${at} --help' for its commands.`,
    );
  }
  const unknown = unknownFlags(argv, state.flags);
  if (unknown.length === 0) return new VespaBulkError('VB_USAGE', `${message}\n${help}`);
  const long = state.flags.filter((f) => f.length > 1);
  const described = unknown.map((flag) => {
    const near = flag.length > 1 ? closestName(kebab(flag), long) : undefined;
    return { flag: `${flag.length > 1 ? '--' : '-'}${flag}`, near: near === undefined ? undefined : `--${near}` };
  });
  const text =
    described.length === 1
      ? `unknown flag ${described[0]!.flag}${described[0]!.near !== undefined ? `: did you mean ${described[0]!.near}?` : ''}`
      : `unknown flags ${described.map((d) => (d.near !== undefined ? `${d.flag} (did you mean ${d.near}?)` : d.flag)).join(', ')}`;
  return new VespaBulkError('VB_USAGE', `${text}\n${help}`);
}

/**
 * The flags of `argv` that are not among `known`, once each and as given (yargs lists `--maxRetry` twice, as
 * `maxRetry` and `max-retry`); matched in kebab case, as yargs accepts `--maxRetries` for `--max-retries`. `--no-x` is
 * known when `x` is; what follows `--` is no flag.
 */
export function unknownFlags(argv: readonly string[], known: readonly string[]): string[] {
  const knownSet = new Set(known.map(kebab));
  const out: string[] = [];
  const seen = new Set<string>();
  for (const arg of argv) {
    if (arg === '--') break;
    let names: string[];
    if (arg.startsWith('--')) {
      const name = arg.slice(2).split('=')[0]!;
      names = [knownSet.has(kebab(name)) || !name.startsWith('no-') ? name : name.slice(3)];
    } else if (/^-[a-zA-Z]/.test(arg)) {
      // -abc is three short flags; -t=x or -tvalue: the first letter only is a flag (a value follows).
      const letters = arg.slice(1).split('=')[0]!;
      names = knownSet.has(letters[0]!) ? [letters[0]!] : [...letters].filter((l) => /[a-zA-Z]/.test(l));
    } else continue;
    for (const name of names) {
      if (name === '' || knownSet.has(kebab(name)) || seen.has(kebab(name))) continue;
      seen.add(kebab(name));
      out.push(name);
    }
  }
  return out;
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
