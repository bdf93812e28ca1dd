import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { tsFilesUnder } from './test/support/ts-files.js';

/**
 * Files whose assertions depend on how fast the machine is at a moment: rates measured over 100 ms windows (the
 * adaptive visit's search), and a signal that must come before a short visit ends. With other files beside them on
 * a 2-core machine they can measure the neighbour's load instead. They run after the rest, alone.
 */
const alone = ['test/visit/adaptive.test.ts', 'test/faults/signals.test.ts'];

/**
 * Files that patch what the whole process shares (a module mock, a spy, fake timers, a property of process
 * redefined). The others share each worker's module cache (`isolate: false`): loading src/ again for each of 220
 * files took a tenth of the suite's CPU. These keep a fresh module graph each, so a patch never outlives its file.
 */
const patchesProcess = /\bvi\.(mock|doMock|spyOn|stubGlobal|stubEnv|useFakeTimers)\(|defineProperty\(process\b/;
const isolated = tsFilesUnder(join(import.meta.dirname, 'test'))
  .filter((f) => f.endsWith('.test.ts') && patchesProcess.test(readFileSync(f, 'utf8')))
  .map((f) => relative(import.meta.dirname, f))
  .filter((f) => !alone.includes(f));

export default defineConfig({
  test: {
    // Tests start real servers on loopback; a generous per-test bound keeps a hung socket from stalling CI.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Compiles the CLI once for the tests that start it as a child process (test/support/cli-entry.ts).
    globalSetup: ['./test/support/compile-cli.ts'],
    reporters: ['default', './test/support/count-reporter.ts'],
    projects: [
      // Two files at a time: most of a file's time is waiting on loopback sockets and child processes.
      {
        extends: true,
        test: {
          name: 'tests',
          include: ['test/**/*.test.ts'],
          exclude: [...alone, ...isolated],
          maxWorkers: 2,
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'isolated', include: isolated, maxWorkers: 2, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'alone', include: alone, maxWorkers: 1, sequence: { groupOrder: 2 } } },
    ],
  },
});
