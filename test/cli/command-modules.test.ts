import { describe, expect, it } from 'vitest';
import type { AnyCommand } from '../../src/cli/command.js';
import { commandList } from '../../src/cli/command-list.js';
import { commands as serve } from '../../src/cli/commands/serve.js';
import { commands as feed } from '../../src/cli/commands/feed.js';
import { commands as visit } from '../../src/cli/commands/visit.js';
import { commands as document } from '../../src/cli/commands/document.js';
import { commands as deploy } from '../../src/cli/commands/deploy.js';
import { commands as validate } from '../../src/cli/commands/validate.js';
import { commands as bench } from '../../src/cli/commands/bench.js';
import { commands as report } from '../../src/cli/commands/report.js';
import { commands as compare } from '../../src/cli/commands/compare.js';

// main() imports only the module of the command a user names, found through commandList, and lists the commands
// in the top-level help from it: a command missing there could not be run, and one listed under the wrong module
// would be reported as unknown.
describe('commandList', () => {
  it('is every top-level command of every command module, under the module that defines it, as the module words it', () => {
    const modules: Record<string, AnyCommand[]> = {
      serve,
      feed,
      visit,
      document,
      deploy,
      validate,
      bench,
      report,
      compare,
    };
    const defined: Record<string, { module: string; command: string; describe: unknown }> = {};
    for (const [module, commands] of Object.entries(modules)) {
      for (const c of commands)
        defined[String(c.command).split(' ')[0]] = { module, command: String(c.command), describe: c.describe };
    }
    expect(commandList).toEqual(defined);
  });
});
