import { commandList } from './command-list.js';
import { colorModes, type ColorMode } from './color.js';
import { exitCodesEpilog } from './exit-codes.js';

/**
 * The top level of the command line: its usage text, its one option, and `vespa-bulk --help` drawn from them
 * without yargs. Loading yargs alone costs a bare `node -e 0` again, and its rendering as much once more, so
 * the help a new user asks for first would take three times a bare Node (benchmarks/startup/run.ts). main.ts
 * gives yargs the same texts, and test/cli/top-help.test.ts holds this drawing to yargs' own, character for
 * character.
 */

export const topUsage =
  '$0 <command> [options]\n\nMoves documents in and out of Vespa as fast as the cluster allows, and loses none of them.';

export const colorOption = {
  alias: 'c',
  choices: colorModes,
  default: 'auto' as ColorMode,
  global: true,
  describe: 'Colour on stderr: auto (a terminal, unless NO_COLOR is set), never, always',
} as const;

/** The width help is wrapped to: the terminal's (stderr, where the CLI talks), at most 110, else 100. */
export function helpWidth(): number {
  return Math.min(110, process.stderr.columns ?? 100);
}

/** Whether `argv` asks for the top-level help and nothing else, which {@link topHelp} answers. */
export function asksTopHelp(argv: readonly string[]): boolean {
  return argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h');
}

interface Column {
  text: string;
  /** Columns of the cell, padding included; unset: what the row leaves. */
  width?: number;
  left?: number;
  right?: number;
  alignRight?: boolean;
}

interface Line {
  text: string;
  span: boolean;
}

/** Words wrapped to `width` columns, breaking a word longer than a line (as wrap-ansi's `hard` does). */
function wrap(text: string, width: number): string[] {
  return text.split('\n').flatMap((paragraph) => {
    const rows = [''];
    for (const word of paragraph.split(' ')) {
      let row = rows[rows.length - 1]!;
      if (row.length > 0 && row.length + 1 + word.length > width) rows.push((row = ''));
      if (row.length > 0) row += ' ';
      let rest = word;
      while (row.length + rest.length > width) {
        const room = width - row.length;
        rows[rows.length - 1] = row + rest.slice(0, room);
        rows.push((row = ''));
        rest = rest.slice(room);
      }
      rows[rows.length - 1] = row + rest;
    }
    return rows.map((r) => r.trimEnd());
  });
}

/**
 * Rows of cells laid out as yargs' cliui lays them: each cell's text wrapped to its width less padding; a row
 * after a spanning one is put on that one's last line when it fits after the text there.
 */
function layout(width: number): { row(columns: Column[], span?: boolean): void; text(): string } {
  const lines: Line[] = [];
  return {
    row(columns, span = false) {
      const fixed = columns.reduce((sum, c) => sum + (c.width ?? 0), 0);
      const unset = columns.filter((c) => c.width === undefined).length;
      const widths = columns.map(
        (c) =>
          c.width ?? Math.max(unset > 0 ? Math.floor((width - fixed) / unset) : 0, 1 + (c.left ?? 0) + (c.right ?? 0)),
      );
      const cells = columns.map((c, i) => wrap(c.text, widths[i]! - (c.left ?? 0) - (c.right ?? 0)));
      const height = Math.max(...cells.map((c) => c.length));
      for (let r = 0; r < height; r++) {
        let text = '';
        columns.forEach((c, i) => {
          const inner = widths[i]! - (c.left ?? 0) - (c.right ?? 0);
          const cell = cells[i]![r] ?? '';
          const body = c.alignRight === true ? cell.trim().padStart(inner) : cell.padEnd(inner);
          text += ' '.repeat(c.left ?? 0) + body + ' '.repeat(c.right ?? 0);
          const previous = lines[lines.length - 1];
          if (r === 0 && previous?.span === true) {
            const lead = /^ */.exec(text)![0].length;
            const taken = previous.text.trimEnd().length;
            if (lead >= taken) {
              lines.pop();
              text = previous.text.trimEnd() + ' '.repeat(lead - taken) + text.trimStart();
            }
          }
        });
        lines.push({ text: text.replace(/ +$/, ''), span });
      }
    },
    text: () =>
      lines
        .map((l) => l.text)
        .join('\n')
        .replace(/\s*$/, ''),
  };
}

/** `vespa-bulk --help`, wrapped to `width` columns, as yargs draws it from main.ts's parser. */
export function topHelp(width = helpWidth()): string {
  const ui = layout(width);
  const blank = () => ui.row([{ text: '' }]);
  const twoColumns = (left: string, leftPad: number, leftWidth: number, right: string, extra?: string) => {
    ui.row([{ text: left, left: leftPad, right: 2, width: leftWidth }, { text: right }], true);
    ui.row([extra === undefined ? { text: '' } : { text: extra, left: 2, alignRight: true }]);
  };
  const half = Math.floor(width * 0.5);

  ui.row([{ text: topUsage.replace(/\$0/g, 'vespa-bulk') }]);
  blank();
  ui.row([{ text: 'Commands:' }]);
  const commands = Object.values(commandList).map((c) => `vespa-bulk ${c.command}`);
  const commandsWidth = Math.min(Math.max(...commands.map((c) => c.length)), half) + 4;
  Object.values(commandList).forEach((c, i) => twoColumns(commands[i]!, 2, commandsWidth, c.describe));
  blank();

  // The short alias first; a long flag alone is indented past where a short one would be ('-x, ').
  const options = [
    {
      flag: `-${colorOption.alias}, --color`,
      indent: 0,
      describe: colorOption.describe,
      extra: `[choices: ${colorOption.choices.map((c) => JSON.stringify(c)).join(', ')}] [default: ${JSON.stringify(colorOption.default)}]`,
    },
    { flag: '--version', indent: 4, describe: 'Show version number', extra: '[boolean]' },
    { flag: '-h, --help', indent: 0, describe: 'Show help', extra: '[boolean]' },
  ];
  ui.row([{ text: 'Options:' }]);
  const optionsWidth = Math.min(Math.max(...options.map((o) => o.flag.length + o.indent)), half) + 4;
  for (const o of options) twoColumns(o.flag, 2 + o.indent, optionsWidth, o.describe, o.extra);
  blank();
  ui.row([{ text: exitCodesEpilog }]);
  return ui.text();
}
