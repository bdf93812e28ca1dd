/**
 * Colour on stderr, and only there: stdout carries data and is never coloured. `--color auto|never|always`
 * (`-c`, as the official `vespa` CLI); in auto, colour when stderr is a terminal (not TERM=dumb) and
 * NO_COLOR is unset or empty (https://no-color.org).
 */
export type ColorMode = 'auto' | 'never' | 'always';

export const colorModes: readonly ColorMode[] = ['auto', 'never', 'always'];

let mode: ColorMode = 'auto';

/** Set once from `--color` before a command runs. */
export function setColorMode(m: ColorMode): void {
  mode = m;
}

/** A terminal that takes cursor control: a TTY whose TERM is not `dumb`. */
export function isTerminal(
  stream: { isTTY?: boolean } = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

/** Whether to colour what is written to `stream` (stderr). */
export function useColor(
  stream: { isTTY?: boolean } = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
  m: ColorMode = mode,
): boolean {
  if (m === 'never') return false;
  if (m === 'always') return true;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return isTerminal(stream, env);
}

const sgr =
  (open: number, close: number) =>
  (text: string, on: boolean = useColor()): string =>
    on ? `\x1b[${open}m${text}\x1b[${close}m` : text;

/** Failures and errors. */
export const red = sgr(31, 39);
/** Warnings. */
export const yellow = sgr(33, 39);

const ansi = /\x1b\[[0-9;]*[A-Za-z]/g;

/** Columns `text` takes on a terminal: its length without escape sequences. */
export function visibleLength(text: string): number {
  return text.replace(ansi, '').length;
}

export function stripAnsi(text: string): string {
  return text.replace(ansi, '');
}
