import { afterEach, describe, expect, it, vi } from 'vitest';
import { commandList } from '../../src/cli/command-list.js';
import { topHelp } from '../../src/cli/top-help.js';
import { runInProcess } from '../support/in-process-cli.js';

/**
 * `vespa-bulk --help` is drawn without yargs (src/cli/top-help.ts): it must stay what yargs draws from the same
 * parser, which `--color auto --help` still goes through, at a wide, the default and a narrow terminal.
 */
const columns = Object.getOwnPropertyDescriptor(process.stderr, 'columns');
afterEach(() => {
  if (columns === undefined) delete (process.stderr as { columns?: number }).columns;
  else Object.defineProperty(process.stderr, 'columns', columns);
});

describe('vespa-bulk --help', () => {
  for (const width of [160, 100, 72]) {
    it(`is yargs' top-level help at ${width} columns`, async () => {
      Object.defineProperty(process.stderr, 'columns', { value: width, configurable: true, writable: true });
      const ours = await runInProcess(['--help']);
      // yargs prints its help with console.log.
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      const yargs = await runInProcess(['--color', 'auto', '--help']);
      const printed = log.mock.calls.map((args) => `${args.join(' ')}\n`).join('');
      log.mockRestore();
      expect(yargs.code).toBe(0);
      expect(ours.code).toBe(0);
      expect(ours.stdout).toBe(printed);
    });
  }

  it('lists every command, -h the same', async () => {
    const help = await runInProcess(['-h']);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(`${topHelp()}\n`);
    for (const { command } of Object.values(commandList))
      expect(help.stdout).toContain(`vespa-bulk ${command.split(' ')[0]}`);
  });
});
